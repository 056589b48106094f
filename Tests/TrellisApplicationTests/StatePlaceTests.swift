import Foundation
import Logging
import Testing
import TrellisStore
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
            #expect(error.description.contains("`trellis run` makes one"), "\(error)")
            return false
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
}
