import Logging
import Synchronization
import TrellisCore
import TrellisMQTT

extension MQTTClient {
    /// A client of its own on `bridge`'s upstream broker, named after `owner` (the relay's client id,
    /// or its share group's name, whose relays take turns in one upstream session) and the bridge's
    /// connection for `direction` (``BridgeSettings/connectionName(_:)``). Its session is persistent
    /// (the week a relay's is kept), so the upstream broker keeps what the receiver has not
    /// acknowledged, and libmosquitto sends again what the sender had in flight when the link dropped.
    static func upstream(
        of bridge: BridgeSettings, owner: String, direction: BridgeRule.Direction, maxUnhandledMessages: Int? = nil,
        maximumPacketSize: Int? = nil, logger: Logger
    ) throws -> MQTTClient {
        var configuration = MQTTConfiguration(
            host: bridge.host, port: bridge.port, clientID: "\(owner)-\(bridge.connectionName(direction))",
            cleanStart: false, sessionExpiry: TrellisApplication.sessionExpiry,
            maxUnhandledMessages: maxUnhandledMessages, maximumPacketSize: maximumPacketSize)
        configuration.username = bridge.username
        configuration.password = try bridge.passwordFile.map(BrokerLink.password(inFile:))
        configuration.tls = bridge.tls.map {
            MQTTTLSConfiguration(certificateAuthorities: $0.ca, certificate: $0.cert, privateKey: $0.key)
        }
        return try MQTTClient(configuration: configuration, logger: logger)
    }
}

/// One direction of a bridge on this relay: the upstream client of the turn under way (none while
/// the relay stands by for another relay of its share group), and what the probes say of it.
package final class UpstreamLink: Sendable {
    let turns: BridgeTurns
    /// A new client for a turn; each turn has its own, shut down as the turn ends.
    let connect: @Sendable () throws -> MQTTClient
    private let current = Mutex<MQTTClient?>(nil)

    /// The link of `turns`, whose clients `connect` makes; made once here, so that a setting the
    /// upstream client refuses (an unreadable password file) stops the start.
    init(turns: BridgeTurns, connect: @escaping @Sendable () throws -> MQTTClient) throws {
        self.turns = turns
        self.connect = connect
        _ = try connect()
    }

    /// Whether this relay's client is connected upstream now.
    package var isConnected: Bool { current.withLock { $0?.isConnected ?? false } }
    /// Whether the relay stands by while another relay of its group holds the link.
    package var standby: Bool { turns.shared && current.withLock { $0 == nil } }

    /// Runs `body` with a started client for each of this relay's turns, until cancelled.
    func run(logger: Logger, _ body: @escaping @Sendable (MQTTClient) async -> Void) async {
        await turns.run(logger: logger) {
            let client: MQTTClient
            do {
                client = try self.connect()
            } catch {
                logger.error(
                    "could not make the bridge's upstream client: \(error)", metadata: ["lease": "\(self.turns.lease)"])
                return
            }
            self.current.withLock { $0 = client }
            client.start()
            await body(client)
            await client.shutdown()
            self.current.withLock { $0 = nil }
        }
    }
}
