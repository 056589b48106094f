import Metrics
import TrellisSocketIO

/// The Socket.IO endpoint's figures, exported on `/metrics` when `--metrics` is on.
struct SocketIOMetrics: Sendable {
    private let sessions = Gauge(label: "trellis_socketio_sessions")

    func opened(version: EngineIOVersion, sessions count: Int) {
        Counter(label: "trellis_socketio_sessions_opened_total", dimensions: [("protocol", "eio\(version.rawValue)")])
            .increment()
        sessions.record(count)
    }

    func closed(reason: String, sessions count: Int) {
        Counter(label: "trellis_socketio_sessions_closed_total", dimensions: [("reason", reason)]).increment()
        sessions.record(count)
    }

    /// A packet or payload that was not understood.
    func malformed(_ reason: String) {
        Counter(label: "trellis_socketio_malformed_total", dimensions: [("reason", reason)]).increment()
    }

    /// A Socket.IO press that was not applied, by why (`presses_off`, `missing_token`, `wrong_token`).
    func refusedPress(_ reason: String) {
        Counter(label: "trellis_socketio_presses_refused_total", dimensions: [("reason", reason)]).increment()
    }

    /// A request answered with an Engine.IO error.
    func refused(_ reason: String) {
        Counter(label: "trellis_socketio_refused_total", dimensions: [("reason", reason)]).increment()
    }
}
