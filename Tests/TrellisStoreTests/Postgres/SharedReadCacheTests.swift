import Foundation
import Testing
import TrellisCore
@testable import TrellisStore
@testable import TrellisStorePostgres
import TrellisTestSupport

/// The PostgreSQL store keeps the plant tracker's answers while the plant tables do not change,
/// and a write through another relay is in the next answer of a message that arrived after it.
@Suite("PostgreSQL: plant answers kept across messages, two relays", .enabled(if: PostgresTestServer.isRequired))
struct SharedReadCacheTests {
    /// What a plant request does on `store`: its spam admission (which reads the plants version),
    /// then `read`, under the message's own ``ObservedVersions``.
    func handle<T: Sendable>(on store: PostgresStore, _ read: @Sendable (PostgresStore) async throws -> T) async throws
        -> T
    {
        try await ObservedVersions.$current.withValue(ObservedVersions()) {
            _ = try await store.admitMessage(sender: "app", at: Date(), limit: 1_000, window: 1, usingAllowance: false)
            return try await read(store)
        }
    }

    /// Whether a message admitted now on `store` may take the answer kept for every plant's records.
    func keptAnswerTaken(on store: PostgresStore) async throws -> Bool {
        try await handle(on: store) { store in PostgresReadCache.lookup(nil, in: store.readCache.sensors).answer != nil
        }
    }

    @Test("a reading and a rename through one relay are in the other relay's next answers; unchanged answers are kept")
    func writesThroughTheOtherRelay() async throws {
        try await withTwoRelays { one, two in
            _ = try await one.addPlant(name: "fern", sensors: ["0x36"], maxPlants: 7)
            let first = try await handle(on: two) { try await $0.sensorRecords(plant: nil) }
            #expect(first?.map(\.sensor) == ["0x36"] && first?.first?.moisture == nil)
            #expect(try await keptAnswerTaken(on: two))

            try await one.recordReading(sensor: "0x36", moisture: 40, temperature: 70, at: Date())
            try await one.flush()
            #expect(try await !keptAnswerTaken(on: two))
            #expect(try await handle(on: two) { try await $0.sensorRecords(plant: nil) }?.first?.moisture == 40)
            #expect(try await keptAnswerTaken(on: two))

            #expect(try await handle(on: two) { try await $0.plants() }.map(\.name) == ["fern"])
            #expect(try await one.renamePlant(from: "fern", to: "ivy").plantID != nil)
            #expect(try await handle(on: two) { try await $0.plants() }.map(\.name) == ["ivy"])
            #expect(try await handle(on: two) { try await $0.sensorRecords(plant: "fern") } == nil)
            #expect(try await handle(on: two) { try await $0.sensorRecords(plant: "ivy") }?.first?.moisture == 40)
            #expect(try await one.deletePlant(name: "ivy") != nil)
            #expect(try await handle(on: two) { try await $0.sensorRecords(plant: nil) } == [])
            #expect(try await handle(on: two) { try await $0.plants() }.isEmpty)
        }
    }

    /// Two relays' stores on one database, a plant `fern` on sensor 0x36 added through the first,
    /// and every plant's records read (and kept) through `reader` for one admitted message.
    func withFernKept(
        by reader: KeyPath<(PostgresStore, PostgresStore), PostgresStore>,
        _ body: @escaping (PostgresStore, PostgresStore) async throws -> Void
    ) async throws {
        try await withTwoRelays { one, two in
            _ = try await one.addPlant(name: "fern", sensors: ["0x36"], maxPlants: 7)
            _ = try await handle(on: (one, two)[keyPath: reader]) { try await $0.sensorRecords(plant: nil) }
            try await body(one, two)
        }
    }

    @Test("a read made for no admitted message asks the database")
    func withoutAVersionSeen() async throws {
        try await withFernKept(by: \.1) { one, two in
            try await one.recordReading(sensor: "0x36", moisture: 55, temperature: 70, at: Date())
            try await one.flush()
            #expect(try await two.sensorRecords(plant: nil)?.first?.moisture == 55)
        }
    }

    @Test("a relay's own reading, still written behind, is in its next answer")
    func ownWriteBehind() async throws {
        try await withFernKept(by: \.0) { one, _ in
            try await one.recordReading(sensor: "0x36", moisture: 61, temperature: 70, at: Date())
            #expect(try await handle(on: one) { try await $0.sensorRecords(plant: nil) }?.first?.moisture == 61)
        }
    }
}
