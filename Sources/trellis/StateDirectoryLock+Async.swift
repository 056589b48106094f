import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension StateDirectoryLock {
    /// Runs the asynchronous `body` holding the state directory's lock alone (no relay can start on
    /// it meanwhile; one that tries waits); returns nil without running it when a relay holds it.
    static func whileNoRelayRuns<T>(_ directory: String, _ body: () async throws -> T) async throws -> T? {
        let fd = open((directory as NSString).appendingPathComponent(fileName), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CocoaError(.fileWriteNoPermission) }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return nil }
        defer { flock(fd, LOCK_UN) }
        return try await body()
    }
}
