import Foundation
import Logging
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisStoreSQLite

/// The broker sends a QoS 1 message again when it never got the acknowledgement, for example
/// because Trellis died after handling it. The engine must drop such a redelivery, and only it.
@Suite("Redeliveries of handled messages")
struct RedeliveryTests {
    static func press(id: Int, connection: Int, resumed: Bool, payload: String = "") -> MQTTMessage {
        MQTTMessage(
            topic: "p2o/buttons/door/press", payload: Array(payload.utf8), qos: .atLeastOnce,
            delivery: MQTTDelivery(packetID: id, connection: connection, sessionResumed: resumed))
    }

    static func engine(_ store: SQLiteStore) -> RelayEngine {
        Relay.engine(store: store, settings: RelaySettings(), logger: Logger(label: "test"))
    }

    @Test("a press redelivered on the resumed session is counted once, across a restart of the engine")
    func pressCountedOnce() async throws {
        let directory = (NSTemporaryDirectory() as NSString).appendingPathComponent("trellis-redelivery-\(UUID())")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try SQLiteStore(directory: directory)
        let engine = Self.engine(first)
        for id in 1...3 {
            _ = await engine.process(Self.press(id: id, connection: 1, resumed: false), at: Date())
        }
        try await first.close()

        let second = try SQLiteStore(directory: directory)
        let restarted = Self.engine(second)
        try await restarted.deliveries.restore(from: second)
        #expect(await restarted.process(Self.press(id: 3, connection: 1, resumed: true), at: Date()).isEmpty)
        _ = await restarted.process(Self.press(id: 4, connection: 1, resumed: true), at: Date())
        #expect(try await second.button(id: "door")?.total == 4)
        #expect(restarted.counters.snapshot().redeliveries == 1)
        try await second.close()
    }

    @Test("after a new session the same identifiers are new messages")
    func newSession() async throws {
        let store = try SQLiteStore.inMemory()
        let engine = Self.engine(store)
        _ = await engine.process(Self.press(id: 1, connection: 1, resumed: false), at: Date())
        _ = await engine.process(Self.press(id: 1, connection: 2, resumed: false), at: Date())
        _ = await engine.process(Self.press(id: 1, connection: 3, resumed: true), at: Date())
        #expect(try await store.button(id: "door")?.total == 2)
        #expect(try await store.recentDeliveries(limit: 10).map(\.packetID) == [1])
        try await store.close()
    }

    @Test("QoS 0 messages carry no delivery and are never dropped")
    func qosZero() async throws {
        let store = try SQLiteStore.inMemory()
        let engine = Self.engine(store)
        let press = MQTTMessage(topic: "p2o/buttons/door/press", payload: [])
        _ = await engine.process(press, at: Date())
        _ = await engine.process(press, at: Date())
        #expect(try await store.button(id: "door")?.total == 2)
        try await store.close()
    }
}
