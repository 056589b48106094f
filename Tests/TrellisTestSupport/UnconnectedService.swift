import Foundation
import TrellisMQTT
import TrellisRelay

/// Runs `body` with the relay service over an engine on a fresh store of `kind`, its MQTT client
/// made and never started: for what is built on the service and needs no broker to decide (the
/// Socket.IO sessions and their routes, the metrics route, the scheduled backups, the share group's
/// peers). Nothing touches the network: the client's QoS 1 publishes stay queued in it, its QoS 0
/// ones are refused as not connected, and its subscriptions are only kept. Answers to local
/// (Socket.IO) clients are handed to them by the engine's caller, as on a running relay. What
/// needs the connection (acknowledgements, retained messages, readiness) is tested through
/// ``RelayHarness``. With an `outlet`, the service publishes and subscribes through it instead of
/// the client (``MessageOutlet``).
public func withUnconnectedService<T>(
    _ kind: StoreKind,
    settings: RelaySettings = RelaySettings(),
    outlet: (any MessageOutlet)? = nil,
    _ body: (RelayService) async throws -> T
) async throws -> T {
    try await withEngine(kind, settings: settings) { harness in
        let configuration = MQTTConfiguration(
            clientID: "trellis-unconnected-\(UUID().uuidString.prefix(8))", will: RelayService.will(for: settings))
        let client = try MQTTClient(configuration: configuration, logger: harness.engine.logger)
        let service = RelayService(
            client: client, engine: harness.engine, logger: harness.engine.logger, outlet: outlet)
        return try await withTearDown(of: service, { await $0.client.shutdown() }, body)
    }
}
