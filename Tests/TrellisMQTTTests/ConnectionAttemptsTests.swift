import CMosquitto
import Testing
@testable import TrellisMQTT

/// The network loop's decisions about connecting, waiting and reporting, as a plain value: no
/// broker, no thread, no clock but the instants given.
@Suite("Connection attempts")
struct ConnectionAttemptsTests {
    private let start = ContinuousClock.now
    private let lost = Int32(MOSQ_ERR_CONN_LOST.rawValue)
    private let refusedCode = Int32(MOSQ_ERR_CONN_REFUSED.rawValue)

    private func attempts() -> ConnectionAttempts {
        ConnectionAttempts(reconnectDelay: 0.5...3, handshakeLimit: .seconds(5))
    }

    /// One pass over the open socket.
    private func pass(
        _ attempts: inout ConnectionAttempts, code: Int32 = Mosquitto.success, after: Duration = .zero,
        connections: Int, stopping: Bool = false, refusal: String? = nil, transportMade: Bool = true
    ) -> [ConnectionAttempts.Action] {
        attempts.serviced(
            code: code, at: start + after, connections: { connections },
            stopping: { stopping }, refusal: { refusal }, transportMade: { transportMade })
    }

    @Test("failed opens wait twice as long each time, up to the upper bound")
    func backoffDoubles() {
        var attempts = attempts()
        let delays = (0..<5).map { _ -> Double in
            let actions = attempts.openFailed(code: Int32(MOSQ_ERR_ERRNO.rawValue))
            guard case let .pause(seconds) = actions.last else { Issue.record("no pause in \(actions)"); return -1 }
            #expect(
                actions.contains(
                    .reportConnectFailed(code: Int32(MOSQ_ERR_ERRNO.rawValue), afterOpen: false, retryIn: seconds)))
            return seconds
        }
        #expect(delays == [0.5, 1, 2, 3, 3])
        #expect(attempts.isFirstAttempt, "no socket opened yet: the library's connect, not reconnect")
    }

    @Test("invalid settings are reported once, on the first attempt")
    func invalidSettings() {
        var attempts = attempts()
        let invalid = Int32(MOSQ_ERR_INVAL.rawValue)
        #expect(attempts.openFailed(code: invalid).first == .reportInvalidSettings(code: invalid))
        _ = attempts.opened(at: start, connections: 0)
        _ = pass(&attempts, code: lost, connections: 0)
        #expect(!attempts.openFailed(code: invalid).contains(.reportInvalidSettings(code: invalid)))
    }

    @Test("a connection counts from its CONNACK, and resets the wait")
    func connackResetsBackoff() {
        var attempts = attempts()
        _ = attempts.openFailed(code: lost)
        _ = attempts.openFailed(code: lost)
        #expect(attempts.backoff == 2)
        #expect(attempts.opened(at: start, connections: 4) == [.discardLibraryErrors])
        #expect(attempts.awaitsConnack)
        #expect(pass(&attempts, connections: 4).isEmpty, "no CONNACK yet, nothing to do")
        #expect(pass(&attempts, connections: 5) == [.keepLibraryLog(false)])
        #expect(!attempts.awaitsConnack && attempts.backoff == 0.5)
        #expect(
            pass(&attempts, after: .seconds(60), connections: 5).isEmpty, "a connected socket has no handshake limit")
        #expect(pass(&attempts, code: lost, connections: 5) == [.markDisconnected(code: lost), .pause(seconds: 0.5)])
        #expect(!attempts.isOpen)
    }

    @Test("a socket that gets no CONNACK within the limit is given up and reported")
    func handshakeLimit() {
        var attempts = attempts()
        _ = attempts.opened(at: start, connections: 0)
        #expect(pass(&attempts, after: .seconds(4), connections: 0).isEmpty)
        let keepalive = Int32(MOSQ_ERR_KEEPALIVE.rawValue)
        #expect(
            pass(&attempts, after: .seconds(6), connections: 0)
                == [.reportConnectFailed(code: keepalive, afterOpen: true, retryIn: 0.5), .pause(seconds: 0.5)])
        #expect(!attempts.isOpen && !attempts.isFirstAttempt)
    }

    @Test("an attempt whose TCP connection is not made is given up after the transport limit, not the handshake's")
    func transportLimit() {
        var attempts = ConnectionAttempts(reconnectDelay: 0.5...3, handshakeLimit: .seconds(30))
        let keepalive = Int32(MOSQ_ERR_KEEPALIVE.rawValue)
        let given = [ConnectionAttempts.Action.reportConnectFailed(code: keepalive, afterOpen: true, retryIn: 0.5)]
        _ = attempts.opened(at: start, connections: 0)
        let waiting = pass(&attempts, after: .seconds(9), connections: 0, transportMade: false)
        #expect(waiting.isEmpty)
        let over = pass(&attempts, after: .seconds(11), connections: 0, transportMade: false)
        #expect(over == given + [.pause(seconds: 0.5)])
        // Made, the same socket waits for its CONNACK up to the handshake limit.
        _ = attempts.opened(at: start, connections: 0)
        let made = pass(&attempts, after: .seconds(20), connections: 0, transportMade: true)
        #expect(made.isEmpty && attempts.isOpen)
    }

    @Test("a refusal is reported in the broker's words, and what the library logged is dropped")
    func refusal() {
        var attempts = attempts()
        _ = attempts.opened(at: start, connections: 0)
        let actions = pass(&attempts, code: refusedCode, connections: 0, refusal: "not authorized")
        #expect(
            actions == [
                .discardLibraryErrors, .reportRefused(reason: "not authorized", retryIn: 0.5), .pause(seconds: 0.5)
            ])
    }

    @Test("shutting down ends the loop after marking the connection gone, without a wait")
    func stopping() {
        var attempts = attempts()
        _ = attempts.opened(at: start, connections: 0)
        _ = pass(&attempts, connections: 1)
        #expect(pass(&attempts, code: lost, connections: 1, stopping: true) == [.markDisconnected(code: lost), .stop])
        #expect(attempts.backoff == 0.5, "no wait was taken")
    }
}
