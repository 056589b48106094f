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
    /// The read-only console for a browser (`console.address`).
    public var console: ListenAddress?
    /// The operator's account, which the console asks for when bound beyond loopback; nil when
    /// there is none to check (the console then starts on loopback only).
    public var consoleLogin: ConsoleLogin?
    /// The limits of the probes', the metrics' and the console's connections (each server its own cap); the
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
        allowedHosts: HostPolicy = .literalsOnly, systemd: Bool = false, console: ListenAddress? = nil,
        consoleLogin: ConsoleLogin? = nil
    ) {
        self.console = console
        self.consoleLogin = consoleLogin
        self.metrics = metrics
        self.health = health
        self.socketIO = socketIO
        self.socketIOSessions = socketIOSessions
        self.probeConnections = probeConnections
        self.allowedHosts = allowedHosts
        self.systemd = systemd
    }
}
