import TrellisServer
import TrellisSocketIO

extension EffectiveConfiguration {
    /// The servers beside the relay, from `metrics.address`, `health.address`, `console.address`, the `http.*` limits and host names, and the
    /// `buttons.socketio_*` settings (their forms were checked when the configuration was loaded). Throws when the Socket.IO
    /// press token file cannot be read.
    package var serverSettings: ServerSettings {
        get throws {
            let header = double("http.header_timeout"), body = double("http.body_timeout"),
                idle = double("http.idle_timeout")
            // The lists' forms were checked when the configuration was loaded.
            let hosts = (try? HostPolicy.parse(string("http.allowed_hosts")).get()) ?? .literalsOnly
            var settings = ServerSettings(
                metrics: ListenAddress(string("metrics.address")),
                health: ListenAddress(string("health.address")),
                socketIO: ListenAddress(string("buttons.socketio_address")),
                probeConnections: ConnectionLimits(
                    headerTimeout: header, bodyTimeout: body, idleTimeout: idle,
                    maximumConnections: int("http.max_connections")),
                allowedHosts: hosts, systemd: true, console: ListenAddress(string("console.address")))
            if settings.socketIO != nil {
                settings.socketIOSessions = SocketIOSettings(
                    maximumSessions: int("buttons.socketio_max_sessions"),
                    maximumSessionsPerAddress: int("buttons.socketio_max_sessions_per_address"),
                    presses: try SocketIOServer.pressPolicy(tokenFile: string("buttons.socketio_press_token_file")),
                    origins: ((try? OriginPolicy.parse(string("buttons.socketio_allowed_origins")).get()) ?? .ownOnly)
                        .trusting(hosts),
                    connections: ConnectionLimits(
                        headerTimeout: header, bodyTimeout: body, idleTimeout: idle,
                        maximumConnections: int("buttons.socketio_max_connections")))
            }
            return settings
        }
    }
}
