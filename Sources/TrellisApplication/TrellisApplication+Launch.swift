import Configuration
import Foundation
import Logging
import ServiceLifecycle
import TrellisBroker
import TrellisMQTT
import TrellisRelay
import TrellisServer
import TrellisStore

extension TrellisApplication {
    /// `trellis run`: holds the state, opens and seeds the store, starts the broker (keeping its
    /// local accounts) or joins the one named, assembles the application and runs it until SIGINT
    /// or SIGTERM, then closes the store. `flags` are the command line's settings, read again by a
    /// reload; `watchConfig` also reloads when the file changes.
    package static func launch(
        _ configuration: EffectiveConfiguration, flags: [String: ConfigContent], watchConfig: Bool, logger: Logger
    ) async throws {
        let signals = await StartupSignals.trap()
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
            owner: clientID, logger: Logger(label: "trellis.store"), wait: { !signals.wasSignalled })
        try await seed(store, configuration, logger: logger)

        var settings = configuration.relaySettings
        settings.clientID = clientID
        let broker = try await BrokerLink.make(configuration, settings: settings, logger: logger)
        if let problem = ResponseTopicPolicy.check(
            restricting: settings.restrictResponseTopics, username: broker.username)
        {
            throw CredentialsError(description: problem)
        }
        let mqtt = mqtt(
            host: broker.address.host, port: broker.address.port, clientID: clientID, username: broker.username,
            password: broker.password, settings: settings, maxUnhandled: configuration.int("broker.max_unhandled"),
            maxPacketBytes: configuration.int("broker.max_packet_bytes"), tls: tls)
        var servers = try configuration.serverSettings
        servers.consoleLogin = broker.accountsFile.map { OperatorLogin(passwordFile: $0).consoleLogin }
        var application = try TrellisApplication(
            store: store, mqtt: mqtt, settings: settings, servers: servers,
            before: broker.services, logger: logger)
        for (message, address) in application.announcements {
            logger.info("\(message)", metadata: ["address": "\(address)"])
        }
        let reloader = ConfigReloader(
            configuration: configuration, flags: flags, relay: application.relay,
            logger: Logger(label: "trellis.config"))
        application.append(reloader)
        if watchConfig, let file = configuration.file {
            application.append(
                try await ConfigWatcher(file: file, reloader: reloader, logger: Logger(label: "trellis.config")))
        }
        var starting: Logger.Metadata = [
            "broker": "\(broker.address)", "state": "\(configuration.storeDescription)", "client_id": "\(clientID)"
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

        let group = application.group(logger: logger, shutdownOn: [.sigterm, .sigint])
        await signals.handOver(to: group)
        try await group.run()
        try await store.close()
        logger.info("stopped")
    }

    /// The starter catalog into an empty store, and the plants of `plant.plants_file`.
    private static func seed(_ store: any TrellisStore, _ configuration: EffectiveConfiguration, logger: Logger)
        async throws
    {
        let imported = try await StarterCatalog.seedIfEmpty(store)
        if imported > 0 { logger.info("imported the starter plant catalog", metadata: ["species": "\(imported)"]) }
        let plantsFile = configuration.string("plant.plants_file")
        if !plantsFile.isEmpty {
            let seeded = try PlantsFile.read(plantsFile)
            try await store.seedPlants(seeded.map { ($0.name, $0.sensors) })
            logger.info("seeded plants", metadata: ["file": "\(plantsFile)", "plants": "\(seeded.count)"])
        }
    }
}

/// The broker credentials could not be read, or the settings cannot be used together.
package struct CredentialsError: Error, CustomStringConvertible {
    package var description: String
}
