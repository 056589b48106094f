import Foundation
import Testing
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// The plant tracker host's default name, the `sender` of every reply.
let plantHost = "Host-RPI3B+"

/// The two ways a plant client talks to Trellis.
enum PlantTopics: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// `rpi/torpi` → `rpi/fromrpi`, shared by every client (the original host's topics).
    case shared
    /// `rpi/torpi/<client>` → `rpi/fromrpi/<client>`.
    case perClient

    func request(for client: String) -> String {
        self == .shared ? "rpi/torpi" : "rpi/torpi/\(client)"
    }

    func reply(for client: String) -> String {
        self == .shared ? "rpi/fromrpi" : "rpi/fromrpi/\(client)"
    }

    var testDescription: String { rawValue }
}

/// Wire text of plant tracker messages, written out independently of the code under test.
enum Wire {
    /// A request from `sender` to the host.
    static func request(_ id: String, from sender: String, _ operation: String, payload: String = "") -> String {
        "ID:\(id);sender:\(sender);receiver:\(plantHost);payload:\(payload);operation:\(operation)"
    }

    /// A message from the host to `receiver`; `payload` must already be in wire form.
    static func reply(_ id: String, to receiver: String, _ operation: String, payload: String) -> String {
        "ID:\(id);sender:\(plantHost);receiver:\(receiver);payload:\(payload);operation:\(operation)"
    }

    /// An error answer: the offending message, percent-encoded, as payload.
    static func error(_ id: String, to receiver: String, _ tag: String, offending: String) -> String {
        reply(id, to: receiver, tag, payload: escape(offending))
    }

    /// Percent-encodes `%`, `;` and `:` as the protocol requires.
    static func escape(_ plain: String) -> String {
        plain.replacingOccurrences(of: "%", with: "%25")
            .replacingOccurrences(of: ";", with: "%3B")
            .replacingOccurrences(of: ":", with: "%3A")
    }
}

/// Adds `plant` on `sensors` as `sender` over the shared topics (`rpi/torpi`), and waits for the
/// host's answer in `inbox`, which collects `client`'s messages and is subscribed to `rpi/fromrpi`:
/// the plant that tests of what comes after (readings, species links, alerts, browsing) start from.
func addPlant(
    _ plant: String, sensors: [String], as sender: String,
    from client: MQTTClient, answeredIn inbox: MessageCollector
) async throws {
    let request = Wire.request(
        "1", from: sender, "REQ_addNewPlant", payload: ([plant] + sensors).joined(separator: ","))
    try await client.publishAndWait(topic: "rpi/torpi", payload: Array(request.utf8))
    try await inbox.messages(on: "rpi/fromrpi")
}

/// One record of `trellis/deadletter`.
struct DeadLetterRecord: Decodable, Sendable {
    var reason: String
    var topic: String
    var payload: String?
    var payloadBase64: String?
    var receivedAt: String
    var size: Int?
    var truncated: Bool?

    enum CodingKeys: String, CodingKey {
        case reason, topic, payload, size, truncated
        case payloadBase64 = "payload_base64"
        case receivedAt = "received_at"
    }
}

/// A plant client connected to a test relay. Its inbox holds everything on `rpi/fromrpi/#`
/// (both reply topic styles, so a stray reply anywhere is seen) and on `trellis/deadletter`.
struct PlantClient: Sendable {
    let name: String
    let topics: PlantTopics
    let client: MQTTClient
    let inbox: MessageCollector

    static let deadLetterTopic = "trellis/deadletter"

    static func connect(
        _ relay: RelayHarness, name: String = "Bob's iPhone", topics: PlantTopics,
        extraFilters: [String] = []
    ) async throws -> PlantClient {
        let client = try await relay.connect()
        let inbox = try await MessageCollector.collecting(
            client, subscribedTo: ["rpi/fromrpi/#", deadLetterTopic] + extraFilters)
        return PlantClient(name: name, topics: topics, client: client, inbox: inbox)
    }

    var requestTopic: String { topics.request(for: name) }
    var replyTopic: String { topics.reply(for: name) }

    /// A request from this client.
    func request(_ id: String, _ operation: String, payload: String = "") -> String {
        Wire.request(id, from: name, operation, payload: payload)
    }

    /// Publishes raw bytes on this client's request topic (QoS 1, acknowledged).
    func send(_ payload: [UInt8], on topic: String? = nil, properties: MQTTProperties = MQTTProperties()) async throws {
        try await client.publishAndWait(topic: topic ?? requestTopic, payload: payload, properties: properties)
    }

    /// Publishes text on this client's request topic.
    func send(_ text: String, on topic: String? = nil, properties: MQTTProperties = MQTTProperties()) async throws {
        try await send(Array(text.utf8), on: topic, properties: properties)
    }

    /// Sends `text` and returns the next reply on this client's reply topic.
    func ask(_ text: String) async throws -> String {
        let before = await inbox.received(on: replyTopic).count
        try await send(text)
        let replies = try await inbox.messages(on: replyTopic, count: before + 1)
        return replies[before].text ?? "<not UTF-8>"
    }

    /// Asks for the sensor records of `plant` (`all`: of every plant) and returns the reply.
    func sensorData(id: String = "data", of plant: String = "Fern") async throws -> String {
        try await ask(request(id, "REQ_plantSensorData", payload: plant))
    }

    /// The reply to ``sensorData(id:of:)`` that carries the records `json`.
    func sensorDataReply(id: String = "data", _ json: String) -> String {
        Wire.reply(id, to: name, "RES_plantSensorData", payload: Wire.escape(json))
    }

    /// Every reply seen so far on any `rpi/fromrpi` topic, as text.
    func allReplies() async -> [String] {
        await inbox.messages.filter { $0.topic == "rpi/fromrpi" || $0.topic.hasPrefix("rpi/fromrpi/") }
            .map { $0.text ?? "<not UTF-8>" }
    }

    /// Waits for at least `count` dead letters and returns all of them, decoded.
    func deadLetters(count: Int) async throws -> [DeadLetterRecord] {
        try await inbox.messages(on: Self.deadLetterTopic, count: count)
        return try await inbox.received(on: Self.deadLetterTopic).map {
            try JSONDecoder().decode(DeadLetterRecord.self, from: Data($0.payload))
        }
    }

    /// Sends a harmless marker request and waits for its answer. Trellis handles messages in
    /// order and the broker keeps that order, so once the marker's reply is here every reply
    /// and dead letter caused by earlier messages is here too.
    @discardableResult
    func sendMarker(_ id: String = "marker", plants: Int = 0) async throws -> String {
        let reply = try await ask(request(id, "REQ_numPlants"))
        #expect(reply == Wire.reply(id, to: name, "RES_numPlants", payload: String(plants)))
        return reply
    }

    /// Sends each of `messages` in order, then the marker (so every one of them has been handled),
    /// and returns the dead letters once at least `count` have come.
    func deadLetters(after messages: [String], count: Int = 1) async throws -> [DeadLetterRecord] {
        for message in messages { try await send(message) }
        try await sendMarker()
        return try await deadLetters(count: count)
    }
}

extension RelaySettings {
    /// Default settings with the shared plant topics in the lossless dialect: the tests of that
    /// dialect on `rpi/torpi` → `rpi/fromrpi` (the default there is the released app's dialect,
    /// tested by `PlantTrackerAppSessionTests` and `PlantOriginalDialectTests`).
    static var losslessPlants: RelaySettings {
        var settings = RelaySettings()
        settings.plantDialect = .lossless
        return settings
    }

    /// These settings with v5 Response Topics honoured wherever they point, as a relay may where the
    /// broker has no accounts (`security.restrict_response_topics: false`).
    var openResponseTopics: RelaySettings {
        var settings = self
        settings.restrictResponseTopics = false
        return settings
    }
}
