import Logging
import ServiceLifecycle
import TrellisRelay
import TrellisSocketIO

/// What runs beside the relay: the HTTP servers and the service manager's notifications. Each is
/// off while its address is nil.
public struct ServerSettings: Sendable {
    /// `/metrics` and the probes (`metrics.address`).
    public var metrics: ListenAddress?
    /// The probes alone (`health.address`).
    public var health: ListenAddress?
    /// The button service for Socket.IO clients (`buttons.socketio_address`).
    public var socketIO: ListenAddress?
    public var socketIOSessions: SocketIOSettings
    /// The limits of the probes' and the metrics' connections (each server its own cap); the
    /// Socket.IO endpoint's are in ``socketIOSessions``.
    public var probeConnections: ConnectionLimits
    /// The `Host` names a web page may reach the metrics and health servers by (`http.allowed_hosts`);
    /// the Socket.IO endpoint's are in its ``SocketIOSettings/origins``.
    public var allowedHosts: HostPolicy
    /// Tells systemd that Trellis is ready and alive (`Type=notify`, `WatchdogSec=`), when it runs
    /// under a unit that asks for it (`NOTIFY_SOCKET`).
    public var systemd: Bool

    public init(
        metrics: ListenAddress? = nil, health: ListenAddress? = nil, socketIO: ListenAddress? = nil,
        socketIOSessions: SocketIOSettings = SocketIOSettings(), probeConnections: ConnectionLimits = .probes,
        allowedHosts: HostPolicy = .literalsOnly, systemd: Bool = false
    ) {
        self.metrics = metrics
        self.health = health
        self.socketIO = socketIO
        self.socketIOSessions = socketIOSessions
        self.probeConnections = probeConnections
        self.allowedHosts = allowedHosts
        self.systemd = systemd
    }
}

/// The services of a running Trellis around one relay, in the order a service group starts them
/// (and stops them in reverse): the relay, its statistics, then the servers that read from it.
/// `trellis run` and the tests' relay harness both build their services here, so what a test runs
/// is what is deployed.
public enum RelayServices {
    /// The services, and for each server the line to log that says where it listens.
    public struct Started: Sendable {
        public var services: [any Service]
        /// "serving … at …" lines, one per server.
        public var announcements: [(message: String, address: ListenAddress)]
    }

    /// The relay, `StatsService`, and the servers `servers` turns on.
    public static func make(relay: RelayService, servers: ServerSettings, logger: Logger) -> Started {
        var services: [any Service] = [
            relay, StatsService(relay: relay, logger: Logger(label: "trellis.stats")),
            BackupService(relay: relay, logger: Logger(label: "trellis.backup"))
        ]
        var announcements: [(message: String, address: ListenAddress)] = []
        let probes = Probes(relay: relay)
        let http = Logger(label: "trellis.http")
        if let address = servers.metrics {
            services.append(
                MetricsServer.service(
                    address: address, relay: relay, probes: probes, limits: servers.probeConnections,
                    hosts: servers.allowedHosts, logger: http))
            announcements.append(("serving /metrics, /livez and /readyz", address))
        }
        if let address = servers.health {
            services.append(
                HealthServer.service(
                    address: address, probes: probes, limits: servers.probeConnections,
                    hosts: servers.allowedHosts, logger: http))
            announcements.append(("serving /livez and /readyz", address))
        }
        if servers.systemd, let notifier = SystemdNotifier() {
            services.append(
                SystemdService(
                    notifier: notifier, relay: relay, probes: probes, watchdog: SystemdNotifier.watchdogPeriod(),
                    logger: Logger(label: "trellis.systemd")))
        }
        if let address = servers.socketIO {
            services.append(
                SocketIOServer.service(
                    address: address, relay: relay, settings: servers.socketIOSessions,
                    logger: Logger(label: "trellis.socketio")))
            announcements.append(("serving the button service to Socket.IO clients on /socket.io/", address))
        }
        return Started(services: services, announcements: announcements)
    }
}
