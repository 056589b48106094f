import Foundation
import Synchronization
import Testing
import TrellisCore
import TrellisMQTTTypes
import TrellisRelay
import TrellisStore
import TrellisTestSupport

/// The relay's engine over a store, no broker, with everything it published kept in order, as a
/// client subscribed to every topic would see it: every client of a test in one (devices, button
/// apps, an operator's console). For the services' logic on each store; wills, retained delivery,
/// sessions and acknowledgements are the broker's and are tested through ``RelayHarness``.
final class EngineRecorder: JSONConsole, Sendable {
    let harness: EngineHarness
    private let published = Mutex<[MQTTMessage]>([])

    init(_ harness: EngineHarness) {
        self.harness = harness
    }

    var store: any TrellisStore { harness.store }

    /// Handles `payload` on `topic` as received from the broker at `time` (`retain`: as a retained
    /// message handed over when Trellis subscribes); what the engine published.
    @discardableResult
    func send(
        _ payload: [UInt8], on topic: String, retain: Bool = false, properties: MQTTProperties = MQTTProperties(),
        at time: Date = Date()
    ) async -> [MQTTMessage] {
        let out = await harness.send(payload, on: topic, retain: retain, properties: properties, at: time)
        published.withLock { $0 += out }
        return out
    }

    /// Handles `text` on `topic`; see ``send(_:on:retain:properties:at:)-([UInt8],_,_,_,_)``.
    @discardableResult
    func send(
        _ text: String, on topic: String, retain: Bool = false, properties: MQTTProperties = MQTTProperties(),
        at time: Date = Date()
    ) async -> [MQTTMessage] {
        await send(Array(text.utf8), on: topic, retain: retain, properties: properties, at: time)
    }

    func reply(to service: String, _ action: String, _ json: String, client: String?) async throws -> String {
        let topics = JSONTopics(prefix: "trellis")
        let out = await send(json, on: topics.request(service: service, action: action, client: client))
        let replyTopic = topics.response(service: service, action: action, client: client)
        let reply = try #require(out.last { $0.topic == replyTopic }, "no reply on \(replyTopic): \(out)")
        return String(decoding: reply.payload, as: UTF8.self)
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

/// Runs `body` with a recorder on an engine over a fresh store of `kind`.
func withRecorder(
    _ kind: StoreKind, settings: RelaySettings = RelaySettings(), _ body: (EngineRecorder) async throws -> Void
) async throws {
    try await withEngine(kind, settings: settings) { harness in try await body(EngineRecorder(harness)) }
}

/// Runs `body` with a recorder on an engine over a store of `kind` that can be opened again, and the
/// means to restart: `restart()` flushes and closes the store and returns a recorder on a new engine
/// over the store opened again, as `trellis run` started again finds its state. The store open at
/// the end is closed.
func withRestarts(
    _ kind: StoreKind, settings: RelaySettings = RelaySettings(),
    _ body: (EngineRecorder, _ restart: () async throws -> EngineRecorder) async throws -> Void
) async throws {
    try await withStorePlace(kind) { open in
        var store = try await open()
        do {
            try await body(EngineRecorder(EngineHarness(store: store, settings: settings))) {
                try await store.flush()
                try await store.close()
                store = try await open()
                return EngineRecorder(EngineHarness(store: store, settings: settings))
            }
            try await store.flush()
            try await store.close()
        } catch {
            try? await store.close()
            throw error
        }
    }
}

extension EngineRecorder {
    /// `sender` adds `plant` with `sensors` over the plant tracker's shared topics; its reply.
    @discardableResult
    func addPlant(_ plant: String, sensors: [String], as sender: String) async -> String? {
        let request = Wire.request(
            "1", from: sender, "REQ_addNewPlant", payload: ([plant] + sensors).joined(separator: ","))
        return await send(request, on: "rpi/torpi").last { $0.topic == "rpi/fromrpi" }?.text
    }
}
