import Foundation
import TrellisMQTT

/// Creating connected clients for tests.
public enum TestClients {
    /// A started client connected to `broker`, with a unique id unless one is given.
    public static func connect(
        to broker: TestBroker,
        id: String = "test-\(UUID().uuidString.prefix(8))",
        configure: (inout MQTTConfiguration) -> Void = { _ in }
    ) async throws -> MQTTClient {
        var configuration = MQTTConfiguration(
            host: broker.host, port: broker.port, clientID: id,
            reconnectDelay: 0.05...0.5)
        configure(&configuration)
        let client = try MQTTClient(configuration: configuration)
        client.start()
        try await client.waitUntilConnected()
        return client
    }
}
