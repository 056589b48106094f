import Logging
import TrellisCore
import TrellisMQTT

extension MQTTClient {
    /// A client of its own on `bridge`'s upstream broker, named after the relay's client id, the
    /// bridge and `role` (`""` for the sender, `-in` for the receiver). Its session is persistent
    /// (the week a relay's is kept), so the upstream broker keeps what the receiver has not
    /// acknowledged, and libmosquitto sends again what the sender had in flight when the link dropped.
    static func upstream(
        of bridge: BridgeSettings, relayClientID: String, role: String, maxUnhandledMessages: Int? = nil,
        logger: Logger
    ) throws -> MQTTClient {
        var configuration = MQTTConfiguration(
            host: bridge.host, port: bridge.port, clientID: "\(relayClientID)-bridge-\(bridge.name)\(role)",
            cleanStart: false, sessionExpiry: TrellisApplication.sessionExpiry,
            maxUnhandledMessages: maxUnhandledMessages)
        configuration.username = bridge.username
        configuration.password = try bridge.passwordFile.map(BrokerLink.password(inFile:))
        configuration.tls = bridge.tls.map {
            MQTTTLSConfiguration(certificateAuthorities: $0.ca, certificate: $0.cert, privateKey: $0.key)
        }
        return try MQTTClient(configuration: configuration, logger: logger)
    }
}
