import TrellisServer

extension EffectiveConfiguration {
    /// The servers beside the relay, from `metrics.address`, `health.address` and the `buttons.socketio_*`
    /// settings (their forms were checked when the configuration was loaded). Throws when the Socket.IO
    /// press token file cannot be read.
    var serverSettings: ServerSettings {
        get throws {
            var settings = ServerSettings(metrics: ListenAddress(string("metrics.address")),
                                          health: ListenAddress(string("health.address")),
                                          socketIO: ListenAddress(string("buttons.socketio_address")),
                                          systemd: true)
            if settings.socketIO != nil {
                settings.socketIOSessions = SocketIOSettings(
                    maximumSessions: int("buttons.socketio_max_sessions"),
                    maximumSessionsPerAddress: int("buttons.socketio_max_sessions_per_address"),
                    presses: try SocketIOServer.pressPolicy(tokenFile: string("buttons.socketio_press_token_file")))
            }
            return settings
        }
    }
}
