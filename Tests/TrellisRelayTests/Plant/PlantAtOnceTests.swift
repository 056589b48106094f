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
/// the other answering at once whenever it can, and every output must match, at QoS 0 and at QoS 1
/// with redeliveries. On PostgreSQL nothing is answered at once (but a redelivery is dropped).
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
            Step(message: request("4", topic: "rpi/torpi/Bob", properties: MQTTProperties(responseTopic: "rpi/fromrpi/Bob/inbox", correlationData: [1, 2])), atOnce: true),
            // A Response Topic outside the requester's reply space: dead-lettered, so not at once.
            Step(message: request("4b", properties: MQTTProperties(responseTopic: "bob/inbox", correlationData: [1, 2])), atOnce: false),
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
                    let (answeredAtOnce, output) = await Self.handle(step.message, by: atOnce, at: time)
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

    /// `message` as the broker delivers it at QoS 1: packet `packetID` of connection `connection`.
    static func delivered(_ message: MQTTMessage, packetID: Int, connection: Int = 1, resumed: Bool = false) -> MQTTMessage {
        var message = message
        message.qos = .atLeastOnce
        message.delivery = MQTTDelivery(packetID: packetID, connection: connection, sessionResumed: resumed)
        return message
    }

    /// `message` taken as far as ``RelayEngine/handleAtOnce(_:at:)`` goes, then finished; and
    /// whether it was answered there (a redelivery dropped counts as answered).
    static func handle(_ message: MQTTMessage, by engine: RelayEngine, at time: Date) async -> (atOnce: Bool, output: RelayEngine.Output) {
        let taken = engine.handleAtOnce(message, at: time)
        let answered = switch taken {
        case .answered, .toConclude: true
        case .toHandle: false
        }
        return (answered, await engine.finish(taken, of: message, at: time))
    }

    @Test("QoS 1: every output matches, redeliveries included; warm requests of a session under way answered at once",
          arguments: StoreKind.allCases, PlantDialect.allCases)
    func sameAnswersAtLeastOnce(_ kind: StoreKind, _ dialect: PlantDialect) async throws {
        var settings = RelaySettings()
        settings.plantDialect = dialect
        settings.spamLimit = 7
        settings.spamWindow = 60
        // The script at QoS 1 on one connection; then a redelivery of packet 3 (dropped) and one of
        // packet 5 (an error answer, dropped too), and a message of a resumed session's next
        // connection, answered.
        var script = Self.script.enumerated().map { (message: Self.delivered($1.message, packetID: $0 + 1), atOnce: $1.atOnce) }
        // The first message starts a new session: the stored marks are forgotten first, which waits.
        // That write leaves the read cache cold; the first request read again warms it for `all`
        // only, so Fern's records are read by the handler.
        script[0].atOnce = false
        script[2].atOnce = nil
        script += [(script[2].message, true), (script[4].message, true),
                   (Self.delivered(Self.request("14"), packetID: 40, connection: 2, resumed: true), true)]
        try await withStore(kind) { suspendingStore in
            try await withStore(kind) { atOnceStore in
                let suspending = try await Self.engine(on: suspendingStore, settings: settings)
                let atOnce = try await Self.engine(on: atOnceStore, settings: settings)
                for (index, step) in script.enumerated() {
                    let time = Self.start.addingTimeInterval(Double(index))
                    let expected = await suspending.handleSuspending(step.message, at: time)
                    let (answeredAtOnce, output) = await Self.handle(step.message, by: atOnce, at: time)
                    let text = step.message.text ?? ""
                    #expect(output.publishes == expected.publishes, "\(text)")
                    #expect(output.handled == expected.handled && output.announcesDiscovery == expected.announcesDiscovery)
                    let redelivery = index >= Self.script.count && index < Self.script.count + 2
                    if kind == .postgres && !redelivery {
                        #expect(!answeredAtOnce, "\(text): a store on a server is always asked")
                    } else if let atOnceExpected = step.atOnce {
                        #expect(answeredAtOnce == atOnceExpected, "\(text)")
                    }
                    for store in [suspendingStore, atOnceStore] {
                        if let position = store.uncommittedPosition { #expect(await store.waitUntilCommitted(through: position)) }
                    }
                }
                let counts = atOnce.counters.snapshot()
                #expect(counts == suspending.counters.snapshot())
                #expect(counts.redeliveries == 2)
                // Every dead letter was stored with its delivery's mark, on both paths: the same marks.
                let marks = Set(try await atOnceStore.recentDeliveries(limit: 100))
                #expect(marks == Set(try await suspendingStore.recentDeliveries(limit: 100)))
                #expect(marks.count >= 4, "the error answer, the refusals and the spam verdicts each stored a mark")
            }
        }
    }

    @Test("through a real broker, a burst of requests gets every answer once, in order, with its dead letters",
          arguments: PlantTopics.allCases, [QoS.atMostOnce, .atLeastOnce])
    func liveBurst(_ topics: PlantTopics, _ qos: QoS) async throws {
        var settings = RelaySettings.losslessPlants
        settings.spamLimit = 1000
        try await withRelay(settings: settings) { relay in
            let bob = try await PlantClient.connect(relay, name: "Bob", topics: topics)
            try await addPlant("Fern", sensors: ["0x36"], as: "Bob", from: bob.client, answeredIn: bob.inbox)
            let before = await bob.inbox.received(on: bob.replyTopic).count
            // Most are answered at once; every seventh is another operation, every tenth names an
            // unknown plant (an error answer whose dead letter the relay's loop stores).
            let requests = (0..<40).map { index in
                index % 7 == 3 ? bob.request("\(index)", "REQ_numPlants")
                    : bob.request("\(index)", "REQ_plantSensorData", payload: index % 10 == 5 ? "Cactus" : "all")
            }
            for request in requests {
                try bob.client.publish(topic: bob.requestTopic, payload: Array(request.utf8), qos: qos)
            }
            let replies = try await bob.inbox.messages(on: bob.replyTopic, count: before + requests.count)
                .dropFirst(before).map { $0.text ?? "" }
            #expect(replies.map { String($0.prefix { $0 != ";" }) } == (0..<40).map { "ID:\($0)" })
            for (index, reply) in replies.enumerated() {
                let tag = index % 7 == 3 ? "RES_numPlants" : index % 10 == 5 ? "ERR_noPlantDataToRequest" : "RES_plantSensorData"
                #expect(reply.hasSuffix(";operation:\(tag)"), "\(reply)")
            }
            let letters = try await bob.deadLetters(count: 4)
            #expect(letters.map(\.reason) == Array(repeating: "ERR_noPlantDataToRequest", count: 4))
            #expect(letters.compactMap(\.payload) == [5, 15, 25, 35].map { requests[$0] })
            // Answered once: nothing came twice (a QoS 1 request taken for a redelivery would not be
            // answered at all, one admitted twice would be missing above).
            #expect(await bob.inbox.received(on: bob.replyTopic).count == before + requests.count)
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
