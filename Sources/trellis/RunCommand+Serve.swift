import Foundation
import Logging
import ServiceLifecycle
import TrellisBroker
import TrellisMQTT
import TrellisRelay
import TrellisStore

extension RunCommand {
    /// Opens the state, starts or joins the broker, and runs the services until a signal.
    func serve(logger: Logger) async throws {
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let store = try SQLiteStore(directory: state)
        if let plantsFile {
            let seeded = try PlantsFile.read(plantsFile)
            try await store.seedPlants(seeded.map { ($0.name, $0.sensors) })
            logger.info("seeded plants", metadata: ["file": "\(plantsFile)", "plants": "\(seeded.count)"])
        }

        var services: [any Service] = []
        let address: BrokerAddress
        if let broker, let parsed = BrokerAddress(parsing: broker) {
            address = parsed
        } else {
            let process = try MosquittoProcess(configPath: try resolveBrokerConfig(logger: logger),
                                               logPath: (state as NSString).appendingPathComponent("mosquitto.log"),
                                               logger: Logger(label: "trellis.broker"))
            try await process.start()
            logger.info("broker is accepting connections", metadata: ["address": "\(process.address)"])
            address = process.address
            services.append(BrokerService(broker: process, logger: logger))
        }

        let settings = self.settings
        let configuration = MQTTConfiguration(
            host: address.host, port: address.port, clientID: username ?? clientId,
            username: username, password: try password(),
            will: RelayService.will(for: settings),
            cleanStart: false, sessionExpiry: 7 * 24 * 3600,
            maxUnhandledMessages: maxUnhandled
        )
        let client = try MQTTClient(configuration: configuration, logger: Logger(label: "trellis.mqtt"))
        let engine = Relay.engine(store: store, settings: settings, logger: Logger(label: "trellis.relay"))
        services.append(RelayService(client: client, engine: engine, logger: Logger(label: "trellis.relay")))
        services.append(StatsService(client: client, engine: engine, interval: .milliseconds(Int(settings.statsInterval * 1000)),
                                     logger: Logger(label: "trellis.stats")))
        logger.info("relay starting", metadata: ["broker": "\(address)", "state": "\(state)", "client_id": "\(clientId)"])

        let group = ServiceGroup(configuration: .init(
            services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        ))
        try await group.run()
        try await store.close()
        logger.info("stopped")
    }

    /// The broker password: `--password-file`, else `TRELLIS_PASSWORD`, else none.
    func password() throws -> String? {
        if let passwordFile {
            guard let text = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                throw CredentialsError(description: "cannot read the password file \(passwordFile)")
            }
            return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        }
        return ProcessInfo.processInfo.environment["TRELLIS_PASSWORD"]
    }

    /// The broker configuration to start: `--broker-config`, else `./broker.conf`, else the
    /// embedded default written into the state directory.
    func resolveBrokerConfig(logger: Logger) throws -> String {
        if let brokerConfig { return brokerConfig }
        if FileManager.default.fileExists(atPath: "broker.conf") { return "broker.conf" }
        let path = try EmbeddedBrokerConfig.write(into: state)
        logger.info("no broker.conf here; using the embedded default", metadata: ["written_to": "\(path)"])
        return path
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
