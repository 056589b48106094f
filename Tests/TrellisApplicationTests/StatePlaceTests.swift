import Foundation
import Logging
import Synchronization
import Testing
import TrellisStore
import TrellisStorePostgres
import TrellisTestSupport

@testable import TrellisApplication

/// Every command finds, creates and reads a state alike: a command that only reads is told plainly
/// that there is no state yet and makes none, on SQLite (a directory without its database) and on
/// PostgreSQL (a database without Trellis's tables); a command that changes the state makes it.
@Suite("State places: reading finds, changing makes")
struct StatePlaceTests {
    static let logger = Logger(label: "trellis.test.state")

    /// Whether reading `place` finds a state: false when it is refused as holding none.
    static func reads(_ place: StatePlace) async throws -> Bool {
        do {
            try await place.withStore(.read, owner: "test-reader", logger: logger) { _ in }
            return true
        } catch let error as StateAccessError {
            #expect(error.description.contains("holds no Trellis state yet"), "\(error)")
            #expect(error.description.contains("makes one on its first start"), "\(error)")
            return false
        }
    }

    /// Runs `sql` on `url` with Debian's psql, the password in its environment, not its arguments.
    static func psql(_ url: PostgresURL, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        process.arguments = [
            "-h", url.host, "-p", String(url.port), "-U", url.user, "-d", url.database, "-v", "ON_ERROR_STOP=1",
            "-qc", sql
        ]
        process.environment = ["PGPASSWORD": url.password ?? "", "PATH": "/usr/bin:/bin"]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "psql \(sql)")
    }

    @Test("a state of an older release is refused to a reading command, which does not migrate it")
    func olderSchema() async throws {
        guard PostgresTestServer.isRequired else { return }
        try await PostgresTestServer.withDatabase { url in
            let place = StatePlace.postgres(url)
            try await place.withStore(.changeBesideRelays, owner: "test-writer", logger: Self.logger) { _ in }
            try Self.psql(url, "DELETE FROM trellis_migration WHERE name = 'dead-letter-client'")
            for _ in 0..<2 {
                do {
                    try await place.withStore(.read, owner: "test-reader", logger: Self.logger) { _ in }
                    Issue.record("an older schema was read")
                } catch let error as StoreError {
                    #expect(error.message.contains("holds the state of an older Trellis"), "\(error)")
                    #expect(error.message.contains("not yet migrated: dead-letter-client"), "\(error)")
                }
            }
        }
    }

    @Test("an empty PostgreSQL database is read as no state, left without tables; a change makes the state")
    func postgres() async throws {
        guard PostgresTestServer.isRequired else { return }
        try await PostgresTestServer.withDatabase { url in
            let place = StatePlace.postgres(url)
            #expect(try await Self.reads(place) == false)
            // Read again: still nothing there, so the first read made no tables.
            #expect(try await Self.reads(place) == false)
            try await place.withStore(.changeBesideRelays, owner: "test-writer", logger: Self.logger) { store in
                _ = try await store.registerDevice(id: "n1", maxDevices: 10, at: Date())
            }
            #expect(try await Self.reads(place) == true)
        }
    }

    @Test("an empty directory is read as no state and no database file appears; a change makes the state")
    func sqlite() async throws {
        let directory = (NSTemporaryDirectory() as NSString).appendingPathComponent(
            "trellis-place-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let place = StatePlace.sqlite(directory: directory)
        #expect(try await Self.reads(place) == false)
        #expect(!FileManager.default.fileExists(atPath: try #require(place.databaseFile)))
        try await place.withStore(.changeBesideRelays, owner: "test-writer", logger: Self.logger) { _ in }
        #expect(try await Self.reads(place) == true)
    }

    @Test("a refused login at start stops it at once, naming the reason and never the password")
    func refusedLogin() async throws {
        guard PostgresTestServer.isRequired else { return }
        try await PostgresTestServer.withDatabase { url in
            var wrong = url
            wrong.password = "not-the-password"
            let log = CapturedLog()
            let asked = Mutex(false)
            do {
                // As `trellis run` opens it, asked whether to wait for a server it cannot reach yet.
                _ = try await StatePlace.postgres(wrong).open(owner: "test-relay", logger: log.logger) {
                    asked.withLock { $0 = true }
                    return false
                }
                Issue.record("a wrong password was taken")
            } catch {
                #expect(!asked.withLock { $0 }, "a refused login is not waited out")
                #expect(!log.contains("waiting for the PostgreSQL store"))
                #expect("\(error)".contains("cannot open the PostgreSQL store"), "\(error)")
                // `trellis run` ends with this line and a failure status.
                let failure = TrellisApplication.failure(of: error)
                #expect(failure is CommandFailure, "\(failure)")
                #expect(!"\(failure)".contains("not-the-password"), "no secret in the message")
                #expect(!log.contains("not-the-password"), "no secret in the log")
            }
        }
    }
}
