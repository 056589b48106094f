import Foundation
import Logging
import TrellisMQTTTypes
import TrellisRelay
import TrellisStore

/// The relay's engine over a store of any kind, driven directly: a message in, what Trellis would
/// publish out, with no broker and no network. For the logic of the services; what only a broker
/// shows (acknowledgements, sessions, retained messages, shared subscriptions) is tested through
/// ``RelayHarness``.
public final class EngineHarness: Sendable {
    public let engine: RelayEngine
    public let store: any TrellisStore

    public init(store: any TrellisStore, settings: RelaySettings = RelaySettings()) {
        var logger = Logger(label: "trellis.test.engine")
        logger.logLevel = .error
        self.store = store
        engine = Relay.engine(store: store, settings: settings, logger: logger)
    }

    /// Handles `payload` on `topic` as received at `time`, and returns everything it publishes.
    /// `retain` is the flag as the broker delivers it: set on a retained message handed over when
    /// Trellis subscribes, clear on one delivered live (Trellis subscribes without Retain As
    /// Published).
    public func send(
        _ payload: [UInt8], on topic: String, qos: QoS = .atLeastOnce, retain: Bool = false,
        properties: MQTTProperties = MQTTProperties(), at time: Date = Date()
    ) async -> [MQTTMessage] {
        await engine.process(
            MQTTMessage(topic: topic, payload: payload, qos: qos, retain: retain, properties: properties), at: time)
    }

    /// Handles `text` on `topic`; see ``send(_:on:qos:retain:properties:at:)-([UInt8],_,_,_,_,_)``.
    public func send(
        _ text: String, on topic: String, qos: QoS = .atLeastOnce, retain: Bool = false,
        properties: MQTTProperties = MQTTProperties(), at time: Date = Date()
    ) async -> [MQTTMessage] {
        await send(Array(text.utf8), on: topic, qos: qos, retain: retain, properties: properties, at: time)
    }
}

/// Runs `body` with an engine over a fresh store of `kind`, then closes the store.
public func withEngine<T>(
    _ kind: StoreKind,
    settings: RelaySettings = RelaySettings(),
    _ body: (EngineHarness) async throws -> T
) async throws -> T {
    try await withStore(kind) { store in
        let harness = EngineHarness(store: store, settings: settings)
        let result = try await body(harness)
        try await store.flush()
        return result
    }
}
