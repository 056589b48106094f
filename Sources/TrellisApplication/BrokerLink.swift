import Foundation
import Logging
import ServiceLifecycle
import TrellisBroker
import TrellisMQTT
import TrellisRelay

/// Where `trellis run` connects and as whom: the broker named by `broker.address`, or the Mosquitto
/// it starts itself (from `broker.config`, else the embedded default), whose local accounts it
/// keeps when that broker has a password file and an ACL.
struct BrokerLink {
    var address: BrokerURL
    var username: String?
    var password: String?
    /// The broker process to run ahead of the relay, when Trellis started one.
    var services: [any Service]
    /// The password file of the broker Trellis started with its local accounts, where the
    /// operator's account is checked for the console; nil otherwise.
    var accountsFile: String? = nil

    /// Joins the broker named, or starts one.
    static func make(_ configuration: EffectiveConfiguration, settings: RelaySettings, logger: Logger) async throws
        -> BrokerLink
    {
        let named = configuration.string("broker.username")
        if let joined = configuration.brokerURL {
            return BrokerLink(
                address: joined, username: named.isEmpty ? joined.username : named,
                password: try password(configuration, url: joined), services: [])
        }
        let state = configuration.string("state.dir")
        let brokerConfig = try resolveBrokerConfig(configuration, logger: logger)
        var localLogin: (username: String, password: String)?
        var accountsFile: String?
        if let accounts = LocalAccounts(brokerConfig: brokerConfig, state: state) {
            if !named.isEmpty {
                // Trellis logs in with an account named to it: the accounts are the administrator's, the rights the table's.
                try accounts.rewriteACL(prefixes: settings.topicPrefixes)
                accountsFile = accounts.passwordFile
            } else {
                accountsFile = accounts.passwordFile
                // No account named: Trellis keeps its own and the operator's.
                let password = try await accounts.ensure(prefixes: settings.topicPrefixes)
                localLogin = (LocalAccounts.trellisAccount, password)
                logger.info(
                    "logging in to the broker it starts as \(LocalAccounts.trellisAccount); the operator's password is in \(accounts.passwordPath(of: LocalAccounts.operatorAccount))",
                    metadata: ["mosquitto_clients": "XDG_CONFIG_HOME=\(accounts.clientOptionsDirectory)"])
            }
        }
        let process = try MosquittoProcess(
            configPath: brokerConfig,
            logPath: (state as NSString).appendingPathComponent("mosquitto.log"),
            logger: Logger(label: "trellis.broker"))
        try await process.start()
        logger.info("broker is accepting connections", metadata: ["address": "\(process.address)"])
        let address = BrokerURL(host: process.address.host, port: process.address.port)
        return BrokerLink(
            address: address, username: localLogin?.username ?? (named.isEmpty ? address.username : named),
            password: try localLogin?.password ?? password(configuration, url: address),
            services: [BrokerService(broker: process, logger: logger)], accountsFile: accountsFile)
    }

    /// The broker password: `broker.password_file`, else the address's user info, else
    /// `TRELLIS_PASSWORD`, else none.
    static func password(_ configuration: EffectiveConfiguration, url: BrokerURL) throws -> String? {
        let file = configuration.string("broker.password_file")
        if !file.isEmpty { return try password(inFile: file) }
        return url.password ?? ProcessInfo.processInfo.environment["TRELLIS_PASSWORD"]
    }

    /// The password in `file`: its first line, without the line break (for `broker.password_file`
    /// and a bridge's `password_file`).
    static func password(inFile file: String) throws -> String {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw CredentialsError(description: "cannot read the password file \(file)")
        }
        return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
    }

    /// The broker configuration to start: `broker.config` when it exists or was named, else the
    /// embedded default written into the state directory.
    static func resolveBrokerConfig(_ configuration: EffectiveConfiguration, logger: Logger) throws -> String {
        let path = configuration.string("broker.config")
        if configuration.source("broker.config") != .default || FileManager.default.fileExists(atPath: path) {
            return path
        }
        let written = try EmbeddedBrokerConfig.write(into: configuration.string("state.dir"))
        logger.info("no broker.conf here; using the embedded default", metadata: ["written_to": "\(written)"])
        return written
    }
}
