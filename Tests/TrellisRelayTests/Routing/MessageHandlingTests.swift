import Foundation
import Logging
import Testing
@testable import TrellisRelay
import TrellisCore
import TrellisMQTTTypes
import TrellisStore
import TrellisTestSupport

/// The driver of a message's steps (``RelayEngine/begin(_:at:)``, ``RelayEngine/finish(_:of:)``) on
/// every store kind, without a broker: a store in this process answers a warm plant request in
/// `begin`, a store on a server leaves it waiting for its first store operation, and what `begin`
/// leaves, finished later, is the answer `handle` gives in one go.
@Suite("A message's steps, driven as far as nothing waits, then finished")
struct MessageHandlingTests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)

    static func request(_ id: String, _ operation: String = "REQ_plantSensorData", payload: String = "Fern")
        -> MQTTMessage
    {
        MQTTMessage(topic: "rpi/torpi", text: Wire.request(id, from: "Bob", operation, payload: payload))
    }

    /// `message` as the broker delivers it at QoS 1: packet `packetID` of connection `connection`.
    static func delivered(_ message: MQTTMessage, packetID: Int, connection: Int = 1) -> MQTTMessage {
        var message = message
        message.qos = .atLeastOnce
        message.delivery = MQTTDelivery(packetID: packetID, connection: connection, sessionResumed: false)
        return message
    }

    /// A relay over a fresh store of `kind` with Fern on sensor 0x36, its reading stored, and its
    /// records read once, so that a store in this process holds them.
    static func withEngine(_ kind: StoreKind, _ body: (RelayEngine) async throws -> Void) async throws {
        try await withStore(kind) { store in
            _ = try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 10)
            try await store.recordReading(sensor: "0x36", moisture: 41, temperature: 21.5, at: start)
            if let position = store.uncommittedPosition { _ = await store.waitUntilCommitted(through: position) }
            _ = try await store.sensorRecords(plant: "Fern")
            try await body(Relay.engine(store: store, settings: .losslessPlants, logger: Logger(label: "test")))
        }
    }

    @Test(
        "a warm REQ_plantSensorData: answered in begin from memory; on a server it waits for its count",
        arguments: StoreKind.allCases)
    func warmRequest(_ kind: StoreKind) async throws {
        try await Self.withEngine(kind) { engine async throws in
            let message = Self.request("1")
            switch engine.begin(message, at: Self.start) {
            case let .finished(output):
                #expect(kind != .postgres, "a store on a server answers nothing from memory")
                #expect(output.publishes.first?.text?.hasPrefix("ID:1;") == true)
                #expect(output.publishes.first?.text?.hasSuffix(";operation:RES_plantSensorData") == true)
            case let .underway(handling):
                #expect(kind == .postgres, "a store in this process answers a warm request at once")
                guard case .store(.admitMessage) = handling.next else {
                    Issue.record("waits for \(handling.next), not the spam count"); return
                }
                let output = await engine.finish(handling, of: message)
                #expect(output.publishes.first?.text?.hasSuffix(";operation:RES_plantSensorData") == true)
                #expect(output.publishes.first?.text?.contains("0x36") == true)
            }
        }
    }

    @Test(
        "what begin leaves is finished as handle finishes it: an error answer's dead letter is stored",
        arguments: StoreKind.allCases)
    func leftoverConcluded(_ kind: StoreKind) async throws {
        try await Self.withEngine(kind) { engine async throws in
            let message = Self.request("2", payload: "Cactus")
            guard case let .underway(handling) = engine.begin(message, at: Self.start) else {
                Issue.record("a dead letter to store was not left for finish"); return
            }
            let output = await engine.finish(handling, of: message)
            #expect(output.handled)
            #expect(output.publishes.map(\.topic).contains(engine.settings.deadLetterTopic))
            #expect(try await engine.store.deadLetters(limit: 10).map(\.reason) == ["ERR_noPlantDataToRequest"])
        }
    }

    @Test(
        "QoS 1: a new session's first message forgets the stored marks first; a redelivery is dropped in begin",
        arguments: StoreKind.allCases)
    func deliveries(_ kind: StoreKind) async throws {
        try await Self.withEngine(kind) { engine async throws in
            let first = Self.delivered(Self.request("3"), packetID: 1)
            guard case let .underway(handling) = engine.begin(first, at: Self.start),
                case .forgetStoredDeliveries = handling.next
            else {
                Issue.record("the first message of a session did not wait for the marks to be forgotten"); return
            }
            #expect(await engine.finish(handling, of: first).publishes.count == 1)
            let error = Self.delivered(Self.request("4", payload: "Cactus"), packetID: 2)
            #expect(!(await engine.handle(error, at: Self.start).publishes.isEmpty))
            guard case let .finished(dropped) = engine.begin(error, at: Self.start) else {
                Issue.record("a redelivery was not dropped at once"); return
            }
            #expect(dropped.publishes.isEmpty && engine.counters.snapshot().redeliveries == 1)
        }
    }

    @Test(
        "QoS 1: a dead letter is stored with its delivery's mark; a new session's first message, on a topic no route knows, forgets the last session's marks first",
        arguments: StoreKind.allCases)
    func marksOfDeadLetters(_ kind: StoreKind) async throws {
        try await Self.withEngine(kind) { engine async throws in
            let store = engine.store
            // The last session: an error answer, dead-lettered with its mark.
            let error = Self.delivered(Self.request("5", payload: "Cactus"), packetID: 9, connection: 1)
            #expect(!(await engine.handle(error, at: Self.start).publishes.isEmpty))
            if let position = store.uncommittedPosition { _ = await store.waitUntilCommitted(through: position) }
            #expect(try await store.recentDeliveries(limit: 10).map(\.packetID) == [9])

            // A new session (not resumed) begins with a topic no route knows.
            let unknown = Self.delivered(
                MQTTMessage(topic: "nowhere/at/all", text: "hello"), packetID: 1, connection: 2)
            guard case let .underway(handling) = engine.begin(unknown, at: Self.start),
                case .forgetStoredDeliveries = handling.next
            else {
                Issue.record("the first message of a session did not wait for the marks to be forgotten"); return
            }
            #expect(await engine.finish(handling, of: unknown).handled)
            if let position = store.uncommittedPosition { _ = await store.waitUntilCommitted(through: position) }
            // The last session's mark is gone; the dead letter's own is kept.
            #expect(try await store.recentDeliveries(limit: 10).map(\.packetID) == [1])
            #expect(try await store.deadLetters(limit: 10).map(\.reason).contains("unknown_topic"))
        }
    }

    @Test("a topic no route knows: its dead letter, stored by finish", arguments: StoreKind.allCases)
    func unknownTopic(_ kind: StoreKind) async throws {
        try await Self.withEngine(kind) { engine async throws in
            let message = MQTTMessage(topic: "nowhere/at/all", text: "hello")
            guard case let .underway(handling) = engine.begin(message, at: Self.start) else {
                Issue.record("nothing left to store"); return
            }
            _ = await engine.finish(handling, of: message)
            #expect(try await engine.store.deadLetters(limit: 10).map(\.reason) == ["unknown_topic"])
        }
    }
}
