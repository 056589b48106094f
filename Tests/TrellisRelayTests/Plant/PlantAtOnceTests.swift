import Foundation
import Logging
import Testing
@testable import TrellisRelay
import TrellisCore
import TrellisMQTT
import TrellisStore
import TrellisTestSupport

/// A plant request answered at once (``RelayEngine/handleAtOnce(_:at:)``, no async step) gets the
/// answer the suspending handler gives: the same script of requests goes to two relays over two
/// fresh stores of one kind, one handling every message by ``RelayEngine/handleSuspending(_:at:)``,
/// the other answering at once whenever it can, and every output must match. On PostgreSQL nothing is
/// answered at once.
@Suite("Plant requests answered at once, as the suspending handler answers them")
struct PlantAtOnceTests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)

    /// Each request of the script, from `sender` on `topic`, and whether a warm store in this
    /// process answers it at once. Written out as the wire text, independently of the code.
    struct Step: Sendable {
        var message: MQTTMessage
        /// Nil where it depends on what the store's read cache holds (a plant it does not know).
        var atOnce: Bool?
    }

    static func request(_ id: String, from sender: String = "Bob", _ operation: String = "REQ_plantSensorData",
                        payload: String = "all", topic: String = "rpi/torpi", retain: Bool = false,
                        properties: MQTTProperties = MQTTProperties()) -> MQTTMessage {
        MQTTMessage(topic: topic, text: Wire.request(id, from: sender, operation, payload: payload), retain: retain,
                    properties: properties)
    }

    static var script: [Step] {
        [
            Step(message: request("1"), atOnce: true),
            Step(message: request("2", topic: "rpi/torpi/Bob"), atOnce: true),
            Step(message: request("3", payload: "Fern"), atOnce: true),
            Step(message: request("4", properties: MQTTProperties(responseTopic: "bob/inbox", correlationData: [1, 2])), atOnce: true),
            // No plant of that name: ERR_noPlantDataToRequest and its dead letter.
            Step(message: request("5", payload: "Cactus"), atOnce: nil),
            // Refused before counting: a sender not matching its topic, a retained request.
            Step(message: request("6", from: "Alice", topic: "rpi/torpi/Bob"), atOnce: true),
            Step(message: request("7", retain: true), atOnce: true),
            // Never at once: another operation, a request that does not parse, an error tag.
            Step(message: request("8", "REQ_numPlants", payload: ""), atOnce: false),
            Step(message: MQTTMessage(topic: "rpi/torpi", text: "ID:x9;sender:Bob;payload:all;operation:REQ_plantSensorData"),
                 atOnce: false),
            Step(message: request("10", "ERR_plantSensorData", payload: ""), atOnce: false),
            // Bob's eighth counted message passes the limit of 7: kicked, then muted.
            Step(message: request("11"), atOnce: true),
            Step(message: request("12"), atOnce: true),
            Step(message: request("13"), atOnce: true),
        ]
    }

    @Test("every output matches; the warm requests are answered at once", arguments: StoreKind.allCases, PlantDialect.allCases)
    func sameAnswers(_ kind: StoreKind, _ dialect: PlantDialect) async throws {
        var settings = RelaySettings()
        settings.plantDialect = dialect
        settings.spamLimit = 7
        settings.spamWindow = 60
        try await withStore(kind) { suspendingStore in
            try await withStore(kind) { atOnceStore in
                let suspending = try await Self.engine(on: suspendingStore, settings: settings)
                let atOnce = try await Self.engine(on: atOnceStore, settings: settings)
                var published: [String] = []
                for (index, step) in Self.script.enumerated() {
                    let time = Self.start.addingTimeInterval(Double(index))
                    let expected = await suspending.handleSuspending(step.message, at: time)
                    let answeredAtOnce: Bool
                    let output: RelayEngine.Output
                    switch atOnce.handleAtOnce(step.message, at: time) {
                    case let .answered(answered)?:
                        (answeredAtOnce, output) = (true, answered)
                    case let .toConclude(handled)?:
                        (answeredAtOnce, output) = (true, await atOnce.conclude(handled, of: step.message, at: time))
                    case nil:
                        (answeredAtOnce, output) = (false, await atOnce.handleSuspending(step.message, at: time))
                    }
                    let text = step.message.text ?? ""
                    published += expected.publishes.compactMap(\.text)
                    #expect(output.publishes == expected.publishes, "\(text)")
                    #expect(output.handled == expected.handled && output.announcesDiscovery == expected.announcesDiscovery)
                    #expect(!expected.publishes.isEmpty || text.contains("ERR_"), "\(text) is answered")
                    if kind == .postgres {
                        #expect(!answeredAtOnce, "\(text): a store on a server is always asked")
                    } else if let atOnceExpected = step.atOnce {
                        #expect(answeredAtOnce == atOnceExpected, "\(text)")
                    }
                    // Each change is committed before the next message, so a warm read is at hand again.
                    if let position = atOnceStore.uncommittedPosition {
                        #expect(await atOnceStore.waitUntilCommitted(through: position))
                    }
                }
                #expect(atOnce.counters.snapshot() == suspending.counters.snapshot())
                // The script reaches every kind of answer.
                for mark in ["RES_plantSensorData", "ERR_noPlantDataToRequest", "sender_mismatch", "retained_request",
                             "ERR_kickedForSpam", "spam_muted"] {
                    #expect(published.contains { $0.contains(mark) }, "\(mark)")
                }
            }
        }
    }

    /// A relay over `store` with one plant, Fern on sensor 0x36, its reading stored, and its
    /// records read once, so that a store in this process holds them.
    static func engine(on store: any TrellisStore, settings: RelaySettings) async throws -> RelayEngine {
        _ = try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: settings.maxPlants)
        try await store.recordReading(sensor: "0x36", moisture: 41, temperature: 21.5, at: start)
        for name in [nil, "Fern"] { _ = try await store.sensorRecords(plant: name) }
        return Relay.engine(store: store, settings: settings, logger: Logger(label: "test"))
    }
}
