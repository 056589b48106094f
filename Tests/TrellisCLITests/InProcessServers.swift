import Configuration
import Foundation
import Logging
import ServiceLifecycle
import Testing
import TrellisApplication
import TrellisBroker
import TrellisMQTT
import TrellisRelay
import TrellisServer
import TrellisStoreSQLite
import TrellisTestSupport

/// The HTTP servers of `trellis run` (Socket.IO, metrics, health) in this process, on free loopback
/// ports, with the settings the configuration reads from `environment` (`TRELLIS_HTTP_…`), beside a
/// relay over an in-memory store whose client never connects: what the HTTP layer decides alone
/// (connection caps, header, body and idle timeouts, Engine.IO sessions) needs no broker and no
/// `trellis` process. Their log lines are kept in ``log``; their metrics go to the process's
/// registry, bootstrapped at the first use as `trellis run --metrics` bootstraps it (so a count is
/// read as a difference: the registry lives as long as the process).
struct InProcessServers {
    enum Server {
        case socketIO, metrics, health
    }

    /// Each server's port, in the order asked.
    let ports: [Int]
    let log: CapturedLog

    /// Routes the process's swift-metrics to the registry `/metrics` serves; once per process.
    private static let metrics: Void = MetricsServer.bootstrap()

    /// Runs `body` with `servers` listening, then shuts them down and closes the store.
    static func with(
        _ servers: [Server], environment: [String: String] = [:], _ body: (InProcessServers) async throws -> Void
    ) async throws {
        _ = Self.metrics
        var ports: [Int] = []
        while ports.count < servers.count {
            let port = try #require(PortProbe.freeLoopbackPort())
            if !ports.contains(port) { ports.append(port) }
        }
        var flags: [String: ConfigContent] = [:]
        for (server, port) in zip(servers, ports) {
            let key =
                switch server {
                case .socketIO: "buttons.socketio_address"
                case .metrics: "metrics.address"
                case .health: "health.address"
                }
            flags[key] = .string("127.0.0.1:\(port)")
        }
        let configuration = try await EffectiveConfiguration.load(file: nil, environment: environment, flags: flags)
        let settings = try configuration.serverSettings
        let log = CapturedLog()
        var quiet = Logger(label: "trellis.test.servers")
        quiet.logLevel = .critical
        let store = try SQLiteStore.inMemory()
        let nobody = try LoopbackSocket(listening: false)
        let client = try MQTTClient(
            configuration: MQTTConfiguration(host: "127.0.0.1", port: nobody.port, clientID: "servers-test"))
        let relay = RelayService(client: client, store: store, settings: configuration.relaySettings, logger: quiet)
        let probes = Probes(relay: relay)
        let services: [any Service] = servers.map { server in
            switch server {
            case .socketIO:
                SocketIOServer.service(
                    address: settings.socketIO!, relay: relay, settings: settings.socketIOSessions, logger: log.logger)
            case .metrics:
                MetricsServer.service(
                    address: settings.metrics!, relay: relay, probes: probes, limits: settings.probeConnections,
                    hosts: settings.allowedHosts, logger: log.logger)
            case .health:
                HealthServer.service(
                    address: settings.health!, probes: probes, limits: settings.probeConnections,
                    hosts: settings.allowedHosts, logger: log.logger)
            }
        }
        let group = ServiceGroup(services: services, logger: quiet)
        let running = Task { try await group.run() }
        let outcome: Result<Void, any Error>
        do {
            for port in ports {
                try await eventually("the server on \(port) listens") {
                    PortProbe.isAccepting(host: "127.0.0.1", port: port)
                }
            }
            try await body(InProcessServers(ports: ports, log: log))
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        await group.triggerGracefulShutdown()
        _ = await running.result
        await client.shutdown()
        try await store.close()
        try outcome.get()
    }

    /// The value of `series` on the metrics server at `port` now (0 when not exported yet).
    static func value(_ series: String, port: Int) async throws -> Int {
        let (_, metrics) = try await MetricsTests.get("http://127.0.0.1:\(port)/metrics")
        return HTTPLimitsTests.value(series, metrics) ?? 0
    }
}
