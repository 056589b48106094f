import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// Every message that states its own time (a press, a sensor reading's `at`, a device log line's
/// `timestamp`) is refused as `future_time` when that time lies more than `clock.max_future_skew`
/// ahead of its receipt, and changes nothing; within the skew it is used as before.
@Suite("A message's own time: refused beyond the allowed skew into the future")
struct FutureTimeTests {
    static let now = Date(timeIntervalSince1970: 1_795_344_000)
    static let tooLate = ISO8601Time.format(now.addingTimeInterval(301))
    static let justAhead = ISO8601Time.format(now.addingTimeInterval(299))

    /// The dead-letter reasons of handling `text` on `topic`, received at ``now``.
    static func rejected(_ text: String, on topic: String, by harness: EngineHarness) async throws -> [String] {
        try reasons(await harness.send(text, on: topic, at: now))
    }

    static func reasons(_ published: [MQTTMessage]) throws -> [String] {
        try published.filter { $0.topic == "trellis/deadletter" }.map { letter in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(letter.payload)) as? [String: Any])
            return object["reason"] as? String ?? ""
        }
    }

    @Test("a press", arguments: StoreKind.bothStores)
    func press(kind: StoreKind) async throws {
        try await withEngine(kind) { harness async throws in
            #expect(try await Self.rejected(Self.tooLate, on: "p2o/buttons/door/press", by: harness) == ["future_time"])
            #expect(try await harness.store.button(id: "door") == nil)
            #expect(try await Self.rejected(Self.justAhead, on: "p2o/buttons/door/press", by: harness) == [])
            #expect(try await harness.store.button(id: "door")?.history.map(ISO8601Time.format) == [Self.justAhead])
        }
    }

    @Test("a sensor reading", arguments: StoreKind.bothStores)
    func reading(kind: StoreKind) async throws {
        try await withEngine(kind) { harness async throws in
            _ = try await harness.store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 7)
            let late = #"{"moisture":3,"temperature":70,"at":"\#(Self.tooLate)"}"#
            #expect(try await Self.rejected(late, on: "rpi/sensors/0x36", by: harness) == ["future_time"])
            #expect(try await harness.store.sensorRecords(plant: "Fern")?.first?.moisture == nil)
            let real = #"{"moisture":4,"temperature":70}"#
            #expect(try await Self.rejected(real, on: "rpi/sensors/0x36", by: harness) == [])
            #expect(try await harness.store.sensorRecords(plant: "Fern")?.first?.moisture == 4)
            #expect(try await harness.store.sensorRecords(plant: "Fern")?.first?.at == Self.now)
        }
    }

    @Test("a device log line", arguments: StoreKind.bothStores)
    func logLine(kind: StoreKind) async throws {
        try await withEngine(kind) { harness async throws in
            let late = #"{"message":"booted","timestamp":"\#(Self.tooLate)"}"#
            #expect(try await Self.rejected(late, on: "devices/node7/log", by: harness) == ["future_time"])
            #expect(try await harness.store.device(id: "node7") == nil, "not even registered")
            let real = #"{"message":"booted","timestamp":"\#(Self.justAhead)"}"#
            let published = await harness.send(real, on: "devices/node7/log", at: Self.now)
            let letters = try Self.reasons(published)
            #expect(letters == [])
            #expect(published.contains { $0.topic == "trellis/logs/node7" })
        }
    }

    @Test("the skew is the setting's")
    func configured() async throws {
        var settings = RelaySettings()
        settings.maxFutureSkew = 3_600
        try await withEngine(.inMemory, settings: settings) { harness async throws in
            #expect(try await Self.rejected(Self.tooLate, on: "p2o/buttons/door/press", by: harness) == [])
            let hourAndMore = ISO8601Time.format(Self.now.addingTimeInterval(3_601))
            #expect(try await Self.rejected(hourAndMore, on: "p2o/buttons/door/press", by: harness) == ["future_time"])
        }
    }
}
