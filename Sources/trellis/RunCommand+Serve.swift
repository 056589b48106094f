import Foundation
import Logging
import ServiceLifecycle
import TrellisBroker
import TrellisMQTT
import TrellisRelay
import TrellisServer
import TrellisStore

extension RunCommand {
    /// Opens the state, starts or joins the broker, and runs the services until a signal.
    func serve(_ configuration: EffectiveConfiguration, logger: Logger) async throws {
        let signals = await StartupSignals.trap()
        let joined = configuration.brokerURL
        let tls = configuration.tls
        do {
            try tls?.validate()
        } catch {
            throw CredentialsError(description: error.message)
        }
        if let problem = configuration.shareGroupProblem { throw CredentialsError(description: problem) }
        let state = configuration.string("state.dir")
        // Held while it runs (the passwords and the broker's files are here too, also beside a
        // PostgreSQL store): a command that needs the state alone sees the relay and leaves it be.
        _ = try StateHold.take(.sqlite(directory: state), for: .changeBesideRelays)
        let clientID = try configuration.namedClientID ?? ClientIDFile.ensure(in: state)
        let store = try await StatePlace(configuration).open(
            owner: clientID, logger: Logger(label: "trellis.store"),
            wait: { !signals.wasSignalled })
        let imported = try await StarterCatalog.seedIfEmpty(store)
        if imported > 0 { logger.info("imported the starter plant catalog", metadata: ["species": "\(imported)"]) }
        let plantsFile = configuration.string("plant.plants_file")
        if !plantsFile.isEmpty {
            let seeded = try PlantsFile.read(plantsFile)
            try await store.seedPlants(seeded.map { ($0.name, $0.sensors) })
            logger.info("seeded plants", metadata: ["file": "\(plantsFile)", "plants": "\(seeded.count)"])
        }

        var settings = configuration.relaySettings
        settings.clientID = clientID
        var services: [any Service] = []
        let address: BrokerURL
        var localLogin: (username: String, password: String)?
        if let joined {
            address = joined
        } else {
            let brokerConfig = try resolveBrokerConfig(configuration, logger: logger)
            if let accounts = LocalAccounts(brokerConfig: brokerConfig, state: state) {
                if !configuration.string("broker.username").isEmpty {
                    // Trellis logs in with an account named to it: the accounts are the administrator's, the rights the table's.
                    try accounts.rewriteACL(prefixes: settings.topicPrefixes)
                } else {
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
            address = BrokerURL(host: process.address.host, port: process.address.port)
            services.append(BrokerService(broker: process, logger: logger))
        }

        let named = configuration.string("broker.username")
        let username = localLogin?.username ?? (named.isEmpty ? address.username : named)
        if let problem = ResponseTopicPolicy.check(restricting: settings.restrictResponseTopics, username: username) {
            throw CredentialsError(description: problem)
        }
        let mqtt = MQTTConfiguration(
            host: address.host, port: address.port, clientID: clientID,
            username: username, password: try localLogin?.password ?? password(configuration, url: address),
            will: RelayService.will(for: settings),
            cleanStart: false, sessionExpiry: 7 * 24 * 3600,
            maxUnhandledMessages: configuration.int("broker.max_unhandled"),
            tls: tls
        )
        let client = try MQTTClient(configuration: mqtt, logger: Logger(label: "trellis.mqtt"))
        let relay = RelayService(
            client: client, store: store, settings: settings, logger: Logger(label: "trellis.relay"))
        let started = RelayServices.make(relay: relay, servers: try configuration.serverSettings, logger: logger)
        services += started.services
        for (message, address) in started.announcements {
            logger.info("\(message)", metadata: ["address": "\(address)"])
        }
        let reloader = ConfigReloader(
            configuration: configuration, flags: flagValues, relay: relay,
            logger: Logger(label: "trellis.config"))
        services.append(reloader)
        if watchConfig, let file = configuration.file {
            services.append(
                try await ConfigWatcher(file: file, reloader: reloader, logger: Logger(label: "trellis.config")))
        }
        var starting: Logger.Metadata = [
            "broker": "\(address)", "state": "\(configuration.storeDescription)", "client_id": "\(clientID)"
        ]
        if let group = settings.shareGroup { starting["share_group"] = "\(group)" }
        logger.info("relay starting", metadata: starting)
        if let tls {
            logger.info(
                "connecting over TLS 1.2 or later, verifying the broker's certificate and host name",
                metadata: [
                    "ca": "\(tls.certificateAuthorities ?? "the system's CAs")",
                    "client_certificate": "\(tls.certificate ?? "none")"
                ])
        }

        let group = ServiceGroup(
            configuration: .init(
                services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            ))
        await signals.handOver(to: group)
        try await group.run()
        try await store.close()
        logger.info("stopped")
    }

    /// The broker password: `broker.password_file`, else the address's user info, else
    /// `TRELLIS_PASSWORD`, else none.
    func password(_ configuration: EffectiveConfiguration, url: BrokerURL) throws -> String? {
        let file = configuration.string("broker.password_file")
        if !file.isEmpty {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw CredentialsError(description: "cannot read the password file \(file)")
            }
            return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        }
        return url.password ?? ProcessInfo.processInfo.environment["TRELLIS_PASSWORD"]
    }

    /// The broker configuration to start: `broker.config` when it exists or was named, else the
    /// embedded default written into the state directory.
    func resolveBrokerConfig(_ configuration: EffectiveConfiguration, logger: Logger) throws -> String {
        let path = configuration.string("broker.config")
        if configuration.source("broker.config") != .default || FileManager.default.fileExists(atPath: path) {
            return path
        }
        let written = try EmbeddedBrokerConfig.write(into: configuration.string("state.dir"))
        logger.info("no broker.conf here; using the embedded default", metadata: ["written_to": "\(written)"])
        return written
    }
}

/// The broker credentials could not be read.
struct CredentialsError: Error, CustomStringConvertible {
    var description: String
}

/// Prints one line to standard error and returns the failure exit code to throw.
func fail(_ message: String) -> ExitCodeError {
    FileHandle.standardError.write(Data("trellis: error: \(message)\n".utf8))
    return ExitCodeError()
}
