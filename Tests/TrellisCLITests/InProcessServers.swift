import Configuration
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Testing
import TrellisApplication
import TrellisBroker
import TrellisServer
import TrellisStoreSQLite
import TrellisTestSupport

@testable import TrellisMQTT
@testable import TrellisRelay

/// The HTTP servers of `trellis run` (Socket.IO, metrics, health) in this process, on free loopback
/// ports, with the settings the configuration reads from `environment` (`TRELLIS_HTTP_…`), beside a
/// relay over an in-memory store whose client never connects: what the HTTP layer decides alone
/// (connection caps, header, body and idle timeouts, Engine.IO sessions, host names and origins)
/// needs no broker and no `trellis` process. The relay's message loop runs, fed by ``press(_:)`` as
/// its client would feed it, so Socket.IO clients hear presses. Their log lines are kept in ``log``;
/// their metrics go to the process's registry, bootstrapped at the first use as `trellis run
/// --metrics` bootstraps it: a count is read as a difference, and one set of servers runs at a time.
struct InProcessServers {
    enum Server {
        case socketIO, metrics, health
    }

    /// Each server's port, in the order asked.
    let ports: [Int]
    let log: CapturedLog
    let relay: RelayService

    /// Hands a press of `button` to the relay as its client hands it a message from the broker.
    func press(_ button: String) {
        relay.client.messages.yield(MQTTMessage(topic: "p2o/buttons/\(button)/press", payload: [], qos: .atLeastOnce))
    }

    /// How many log lines contain `text`.
    func logged(_ text: String) -> Int {
        log.lines.withLock { $0.filter { $0.text.contains(text) }.count }
    }

    /// Whose turn it is: the servers of one test at a time, as the metrics are the process's.
    private actor Turns {
        private var busy = false
        private var waiting: [CheckedContinuation<Void, Never>] = []

        func take() async {
            guard busy else {
                busy = true
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        /// Hands the turn to the next waiting, if any.
        func give() {
            if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
        }
    }

    private static let turns = Turns()

    /// Routes the process's swift-metrics to the registry `/metrics` serves; once per process.
    private static let metrics: Void = MetricsServer.bootstrap()

    /// Runs `body` with `servers` listening, configured by `environment` and `flags` (settings by
    /// key), then shuts them down and closes the store.
    static func with(
        _ servers: [Server], environment: [String: String] = [:], flags more: [String: ConfigContent] = [:],
        _ body: (InProcessServers) async throws -> Void
    ) async throws {
        _ = Self.metrics
        await turns.take()
        do {
            try await run(servers, environment: environment, flags: more, body)
        } catch {
            await turns.give()
            throw error
        }
        await turns.give()
    }

    private static func run(
        _ servers: [Server], environment: [String: String], flags more: [String: ConfigContent],
        _ body: (InProcessServers) async throws -> Void
    ) async throws {
        var ports: [Int] = []
        while ports.count < servers.count {
            let port = try #require(PortProbe.freeLoopbackPort())
            if !ports.contains(port) { ports.append(port) }
        }
        var flags = more
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
        // How the group ended, if it did before the test: a failure says so beside its own issue.
        let ended = Mutex<String?>(nil)
        let running = Task {
            do {
                try await group.run()
                ended.withLock { $0 = "the servers had stopped" }
            } catch {
                ended.withLock { $0 = "the servers had failed: \(error)" }
            }
        }
        let loop = Task { await relay.handleMessages() }
        let outcome: Result<Void, any Error>
        do {
            for port in ports {
                try await eventually("the server on \(port) listens") {
                    PortProbe.isAccepting(host: "127.0.0.1", port: port)
                }
            }
            try await body(InProcessServers(ports: ports, log: log, relay: relay))
            outcome = .success(())
        } catch {
            outcome = .failure(error)
            // What the failure alone does not tell: whether the servers still ran (a port taken by another
            // process between the probe and the bind stops them) and what they logged (from info up).
            let lines = log.lines.withLock { all in
                all.filter { $0.level >= .info }.suffix(40).map { line in "\(line.level) \(line.text)" }
            }
            let state = ended.withLock { $0 } ?? "the servers were running"
            Issue.record("\(state); their last log lines:\n\(lines.joined(separator: "\n"))")
        }
        await group.triggerGracefulShutdown()
        await running.value
        loop.cancel()
        await loop.value
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
