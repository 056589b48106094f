import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Tells `trellis store restore` whether a relay runs on a state directory: every `trellis run`
/// on an SQLite state holds a shared `flock` on `trellis.lock` in it for as long as it runs (the
/// kernel releases it when the process ends, however it ends); a restore needs the lock alone.
enum StateDirectoryLock {
    static let fileName = "trellis.lock"

    /// Takes the shared lock for this process's lifetime; nil when the file cannot be opened.
    @discardableResult
    static func holdShared(_ directory: String) -> Int32? {
        let fd = open((directory as NSString).appendingPathComponent(fileName), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        guard flock(fd, LOCK_SH) == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Runs `body` holding the lock alone; false without running it when a relay holds it.
    static func whileNoRelayRuns(_ directory: String, _ body: () throws -> Void) throws -> Bool {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fd = open((directory as NSString).appendingPathComponent(fileName), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CocoaError(.fileWriteNoPermission) }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return false }
        defer { flock(fd, LOCK_UN) }
        try body()
        return true
    }
}
