import Foundation
import Synchronization
import Testing
import TrellisCore
import TrellisMQTTTypes
import TrellisRelay
import TrellisTestSupport

/// The device fleet on the relay's engine, no broker: an operator's console and the devices in one,
/// with everything the engine published kept in order, as a client subscribed to every topic would
/// see it. For the fleet's logic on each store; wills, retained delivery and sessions are the
/// broker's and stay in ``DeviceFleetTests``.
final class EngineFleet: JSONConsole, Sendable {
    let harness: EngineHarness
    private let published = Mutex<[MQTTMessage]>([])

    init(_ harness: EngineHarness) {
        self.harness = harness
    }

    /// Handles `payload` on `topic` as received from the broker; what the engine published.
    @discardableResult
    func send(_ payload: [UInt8], on topic: String, properties: MQTTProperties = MQTTProperties()) async
        -> [MQTTMessage]
    {
        let out = await harness.send(payload, on: topic, properties: properties)
        published.withLock { $0 += out }
        return out
    }

    /// Handles `text` on `topic`; see ``send(_:on:properties:)-([UInt8],_,_)``.
    @discardableResult
    func send(_ text: String, on topic: String, properties: MQTTProperties = MQTTProperties()) async -> [MQTTMessage] {
        await send(Array(text.utf8), on: topic, properties: properties)
    }

    func reply(to service: String, _ action: String, _ json: String, client: String?) async throws -> String {
        let topics = JSONTopics(prefix: "trellis")
        let out = await send(json, on: topics.request(service: service, action: action, client: client))
        let replyTopic = topics.response(service: service, action: action, client: client)
        let reply = try #require(out.last { $0.topic == replyTopic }, "no reply on \(replyTopic): \(out)")
        return String(decoding: reply.payload, as: UTF8.self)
    }

    /// Device `id` says it is online, as its first message after connecting does.
    func online(_ id: String) async {
        await send("online", on: "devices/\(id)/status")
    }

    /// Everything published on `topic` so far, oldest first.
    func messages(on topic: String) -> [MQTTMessage] {
        published.withLock { $0 }.filter { $0.topic == topic }
    }

    /// The texts published on `topic` so far, oldest first.
    func texts(on topic: String) -> [String] {
        messages(on: topic).map { String(decoding: $0.payload, as: UTF8.self) }
    }

    /// The text of the latest message on `topic`: what a subscriber holds as its state.
    func latest(on topic: String) -> String? {
        texts(on: topic).last
    }
}

/// Runs `body` with the fleet on an engine over a fresh store of `kind`.
func withFleet(
    _ kind: StoreKind, settings: RelaySettings = RelaySettings(), _ body: (EngineFleet) async throws -> Void
) async throws {
    try await withEngine(kind, settings: settings) { harness in try await body(EngineFleet(harness)) }
}
