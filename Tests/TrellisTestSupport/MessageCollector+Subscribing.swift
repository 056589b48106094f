import Foundation
import TrellisMQTT

/// Opening a client that a test reads from, in one line.
///
/// Nearly every test against a broker starts the same way: connect a client, start collecting
/// what it receives, subscribe it to the topics the test will read. The order matters (collecting
/// starts before the first SUBSCRIBE, so a retained message or an early answer the subscription
/// brings is not missed) and is easy to get wrong by hand; these helpers keep it in one place.
/// What a test publishes and asserts stays in the test.
extension MessageCollector {
    /// Starts collecting from `client`, then subscribes it to each of `filters`, in order, at `qos`.
    public static func collecting(
        _ client: MQTTClient,
        subscribedTo filters: [String],
        qos: QoS = .atLeastOnce
    ) async throws -> MessageCollector {
        let collector = await collecting(client)
        for filter in filters {
            try await client.subscribe(filter, qos: qos)
        }
        return collector
    }
}

extension TestClients {
    /// A started client connected to `broker` with the id `id` (a unique one unless given), subscribed to
    /// each of `filters` at `qos`, and the collector of everything it receives.
    public static func connectCollecting(
        to broker: TestBroker,
        id: String = "test-\(UUID().uuidString.prefix(8))",
        _ filters: String...,
        qos: QoS = .atLeastOnce
    ) async throws -> (client: MQTTClient, inbox: MessageCollector) {
        let client = try await connect(to: broker, id: id)
        let inbox = try await MessageCollector.collecting(client, subscribedTo: filters, qos: qos)
        return (client, inbox)
    }
}

extension RelayHarness {
    /// A client connected to the harness's broker (stopped by ``shutdown()``, as every client of
    /// ``connect(id:configure:)``), subscribed to each of `filters` at `qos`, and the collector of
    /// everything it receives.
    public func connectCollecting(
        _ filters: String...,
        qos: QoS = .atLeastOnce
    ) async throws -> (client: MQTTClient, inbox: MessageCollector) {
        let client = try await connect()
        let inbox = try await MessageCollector.collecting(client, subscribedTo: filters, qos: qos)
        return (client, inbox)
    }
}
