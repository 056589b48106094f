import CMosquitto

/// The network thread's connection attempts as a value: what the loop saw goes in, what to do
/// comes out as ``Action``s, and the loop carries them out.
///
/// It decides when a socket counts as connected (the CONNACK raised the connection count), when an
/// open socket that never got its CONNACK is given up, how long to wait before the next attempt
/// (doubling from the lower bound of the configured delay to its upper bound, back to the lower
/// bound after a connection), and what each failure is reported as: a refusal with the broker's
/// reason, a failed connect or handshake with the library's reasons, or the loss of a connection.
/// Holding no lock and calling nothing, it is tested as a plain type (`ConnectionAttemptsTests`).
struct ConnectionAttempts {
    /// What the loop does next, in order.
    enum Action: Equatable {
        /// Keep libmosquitto's log lines of this attempt, to say why it failed (or stop keeping them).
        case keepLibraryLog(Bool)
        /// Forget what the library logged: it speaks of an earlier attempt, or was already reported.
        case discardLibraryErrors
        /// The first attempt's settings are invalid; reported once, then retried like any failure.
        case reportInvalidSettings(code: Int32)
        /// The socket did not open (`afterOpen` false), or the TLS handshake or CONNECT failed on it.
        case reportConnectFailed(code: Int32, afterOpen: Bool, retryIn: Double)
        /// The broker answered the CONNECT with a refusal, in its words.
        case reportRefused(reason: String, retryIn: Double)
        /// A connection that was up is gone.
        case markDisconnected(code: Int32)
        /// Wait this long before the next attempt.
        case pause(seconds: Double)
        /// Shutting down: the loop ends.
        case stop
    }

    /// The socket of the current attempt.
    enum Socket: Equatable {
        case closed
        /// Open since `openedAt`; connected once the connection count passed `connectionsBefore`.
        case open(openedAt: ContinuousClock.Instant, connectionsBefore: Int, connected: Bool)
    }

    private(set) var socket: Socket = .closed
    /// No attempt has opened a socket yet (the library's `connect`, not `reconnect`).
    private(set) var isFirstAttempt = true
    /// The wait before the next attempt.
    private(set) var backoff: Double
    private let delays: ClosedRange<Double>
    /// How long an open socket may wait for its CONNACK (TLS handshake included).
    let handshakeLimit: Duration
    /// How long an attempt may wait for its TCP connection itself (an asynchronous reconnect): the
    /// kernel's SYNs at 0, 1, 3 and 7 s fall within it, so a link that returns waits at most about
    /// 3 s and the backoff, rather than until the next SYN (15, 31 s …) or the handshake limit.
    static let transportLimit: Duration = .seconds(10)

    init(reconnectDelay: ClosedRange<Double>, handshakeLimit: Duration) {
        self.delays = reconnectDelay
        self.backoff = reconnectDelay.lowerBound
        self.handshakeLimit = handshakeLimit
    }

    /// Matched rather than compared: the derived `==` copies both sockets, on every pass of the loop.
    var isOpen: Bool {
        if case .closed = socket { false } else { true }
    }

    /// Whether the loop must read the connection count after a pass (only until the CONNACK, so
    /// the busy path of a connection takes no lock for it).
    var awaitsConnack: Bool {
        if case .open(_, _, false) = socket { true } else { false }
    }

    /// Before an attempt: its failure is to be explained.
    func attempting() -> [Action] { [.keepLibraryLog(true)] }

    /// The socket opened; `connections` is the count of connections made so far.
    mutating func opened(at now: ContinuousClock.Instant, connections: Int) -> [Action] {
        socket = .open(openedAt: now, connectionsBefore: connections, connected: false)
        isFirstAttempt = false
        return [.discardLibraryErrors]
    }

    /// The socket did not open.
    mutating func openFailed(code: Int32) -> [Action] {
        var actions: [Action] = []
        if code == Int32(MOSQ_ERR_INVAL.rawValue) && isFirstAttempt {
            actions.append(.reportInvalidSettings(code: code))
        }
        let delay = nextDelay()
        actions += [.reportConnectFailed(code: code, afterOpen: false, retryIn: delay), .pause(seconds: delay)]
        return actions
    }

    /// After a pass over the open socket that returned `code`.
    /// - Parameters:
    ///   - connections: the connection count now (read only while ``awaitsConnack``).
    ///   - stopping: whether the client is shutting down (read only when the pass failed).
    ///   - refusal: the broker's refusal of this attempt's CONNECT, taken once (read only when the pass failed).
    ///   - transportMade: whether the TCP connection is made (read only while an attempt past
    ///     ``transportLimit`` awaits its CONNACK).
    mutating func serviced(
        code: Int32, at now: ContinuousClock.Instant, connections: () -> Int,
        stopping: () -> Bool, refusal: () -> String?, transportMade: () -> Bool
    ) -> [Action] {
        guard case let .open(openedAt, before, wasConnected) = socket else { return [] }
        var actions: [Action] = []
        var connected = wasConnected
        var code = code
        if !connected {
            connected = connections() > before
            if connected {
                socket = .open(openedAt: openedAt, connectionsBefore: before, connected: true)
                backoff = delays.lowerBound
                actions.append(.keepLibraryLog(false))
            } else if code == Mosquitto.success && openedAt.duration(to: now) > handshakeLimit {
                code = Int32(MOSQ_ERR_KEEPALIVE.rawValue) // the next attempt closes this socket first
            } else if code == Mosquitto.success && openedAt.duration(to: now) > Self.transportLimit
                && !transportMade()
            {
                code = Int32(MOSQ_ERR_KEEPALIVE.rawValue)
            }
        }
        guard code != Mosquitto.success else { return actions }
        socket = .closed
        if stopping() { return actions + [.markDisconnected(code: code), .stop] }
        let delay = nextDelay()
        if connected {
            actions.append(.markDisconnected(code: code))
        } else if let refusal = refusal() {
            actions += [.discardLibraryErrors, .reportRefused(reason: refusal, retryIn: delay)]
        } else {
            actions.append(.reportConnectFailed(code: code, afterOpen: true, retryIn: delay))
        }
        actions.append(.pause(seconds: delay))
        return actions
    }

    /// The wait before the next attempt; the one after it doubles, up to the upper bound.
    private mutating func nextDelay() -> Double {
        let delay = backoff
        backoff = min(backoff * 2, delays.upperBound)
        return delay
    }
}
