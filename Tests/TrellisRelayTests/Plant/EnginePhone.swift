import Foundation
import Synchronization
import Testing
import TrellisMQTTTypes
import TrellisRelay
import TrellisTestSupport

/// A plant client talking to the relay's engine directly, over a store of any kind: what it sends
/// is handled as the relay handles a message from the broker, and what the engine publishes is kept
/// as the client's inbox. For the plant protocol's logic; what needs a broker (retained messages,
/// sessions, acknowledgements) goes through ``PlantClient``.
final class EnginePhone: Sendable {
    let name: String
    let topics: PlantTopics
    let harness: EngineHarness
    private let published = Mutex<[MQTTMessage]>([])

    init(_ harness: EngineHarness, name: String = "Bob's iPhone", topics: PlantTopics = .shared) {
        self.harness = harness
        self.name = name
        self.topics = topics
    }

    var requestTopic: String { topics.request(for: name) }
    var replyTopic: String { topics.reply(for: name) }

    /// A request from this client.
    func request(_ id: String, _ operation: String, payload: String = "") -> String {
        Wire.request(id, from: name, operation, payload: payload)
    }

    /// Handles `payload` on `topic` (this client's request topic by default), keeping what it publishes;
    /// `retain` as a retained message handed over when Trellis subscribes.
    @discardableResult
    func send(
        _ payload: [UInt8], on topic: String? = nil, retain: Bool = false, properties: MQTTProperties = MQTTProperties()
    ) async throws -> [MQTTMessage] {
        let out = await harness.send(
            payload, on: topic ?? topics.request(for: name), retain: retain, properties: properties)
        published.withLock { $0 += out }
        return out
    }

    /// Handles `text`; see ``send(_:on:retain:properties:)-([UInt8],_,_,_)``.
    @discardableResult
    func send(
        _ text: String, on topic: String? = nil, retain: Bool = false, properties: MQTTProperties = MQTTProperties()
    ) async throws -> [MQTTMessage] {
        try await send(Array(text.utf8), on: topic, retain: retain, properties: properties)
    }

    /// The replies on `topic` among what handling `text` published, as text.
    func replies(to text: String, on topic: String) async throws -> [String] {
        try await send(text).filter { $0.topic == topic }.map { String(decoding: $0.payload, as: UTF8.self) }
    }

    /// Sends `text` and returns its one reply on this client's reply topic.
    func ask(_ text: String) async throws -> String {
        let replies = try await send(text).filter { $0.topic == replyTopic }
        #expect(replies.count == 1, "\(replies.map { $0.topic })")
        let reply = try #require(replies.first, "no reply to \(text)")
        return String(decoding: reply.payload, as: UTF8.self)
    }

    /// Asks for the sensor records of `plant`; the reply.
    func sensorData(id: String = "data", of plant: String = "Fern") async throws -> String {
        try await ask(request(id, "REQ_plantSensorData", payload: plant))
    }

    /// The reply to ``sensorData(id:of:)`` that carries the records `json`.
    func sensorDataReply(id: String = "data", _ json: String) -> String {
        Wire.reply(id, to: name, "RES_plantSensorData", payload: Wire.escape(json))
    }

    /// Asks the number of plants, a marker after the messages a test sends: its one reply comes
    /// after theirs (the engine handles one message at a time), so a test may count replies.
    @discardableResult
    func sendMarker(_ id: String = "marker", plants: Int = 0) async throws -> String {
        let reply = try await ask(request(id, "REQ_numPlants"))
        #expect(reply == Wire.reply(id, to: name, "RES_numPlants", payload: String(plants)))
        return reply
    }

    /// Sends each of `messages`, then the marker, and returns the dead letters published.
    func deadLetters(after messages: [String]) async throws -> [DeadLetterRecord] {
        for message in messages { try await send(message) }
        try await sendMarker()
        return try deadLetters()
    }

    /// Every reply published so far on any `rpi/fromrpi` topic, as text.
    func allReplies() -> [String] {
        published.withLock { $0 }.filter { $0.topic == "rpi/fromrpi" || $0.topic.hasPrefix("rpi/fromrpi/") }.map {
            String(decoding: $0.payload, as: UTF8.self)
        }
    }

    /// Every dead letter published so far, decoded.
    func deadLetters() throws -> [DeadLetterRecord] {
        try published.withLock { $0 }.filter { $0.topic == PlantClient.deadLetterTopic }.map {
            try JSONDecoder().decode(DeadLetterRecord.self, from: Data($0.payload))
        }
    }
}

/// Runs `body` with a plant client named `name` on `topics`, on an engine over a fresh store of `kind`.
func withPhone(
    _ kind: StoreKind, settings: RelaySettings = .losslessPlants, name: String = "Bob's iPhone",
    topics: PlantTopics = .shared, _ body: (EnginePhone) async throws -> Void
) async throws {
    try await withEngine(kind, settings: settings) { harness in
        try await body(EnginePhone(harness, name: name, topics: topics))
    }
}

extension PlantTopics {
    /// Each way of talking to Trellis on each store kind the engine tests run on.
    static var onEveryStore: [(PlantTopics, StoreKind)] {
        allCases.flatMap { topics in StoreKind.bothStores.map { (topics, $0) } }
    }
}
