import Testing
@testable import TrellisSocketIO

/// Sessions left behind after their handshake (or in the middle of an upgrade) close after the
/// grace period instead of holding a place in the table until the ping timeout.
@Suite("Engine.IO sessions: the handshake grace")
struct EngineIOSessionGraceTests {
    let limits = EngineIOLimits(pingInterval: 25, pingTimeout: 60, handshakeGrace: 10)

    func open(_ version: EngineIOVersion, transport: EngineIOSession.Transport = .polling) -> EngineIOSession {
        EngineIOSession.open(id: "s1", socketID: "k1", version: version, transport: transport, limits: limits, now: 0).0
    }

    @Test("a polling handshake never followed by a request closes after the grace", arguments: EngineIOVersion.allCases)
    func abandonedHandshake(version: EngineIOVersion) {
        var session = open(version)
        #expect(session.nextDeadline == 10)
        #expect(session.tick(now: 9.5).isEmpty)
        #expect(!session.isClosed)
        // Engine.IO 3 joined the namespace unprompted, so the application hears it leave.
        #expect(session.tick(now: 10.5) == (version == .v3 ? [.disconnected] : []))
        #expect(session.closeReason == .handshakeTimeout)
    }

    /// What the client does after its handshake; each confirms the session.
    enum FollowUp: String, CaseIterable, Sendable {
        case poll, post, probe
    }

    @Test("a second request confirms the session: only the heartbeat closes it then", arguments: FollowUp.allCases)
    func confirmed(followUp: FollowUp) {
        var session = open(.v3)
        switch followUp {
        case .poll: session.heard(now: 1)
        case .post: _ = session.receive(EngineIOPacket(.message, #"2["register","door"]"#), via: .polling, now: 1)
        case .probe: _ = session.receive(EngineIOPacket(.ping, "probe"), via: .websocket, now: 1)
        }
        if followUp == .probe { _ = session.receive(EngineIOPacket(.upgrade), via: .websocket, now: 2) }
        #expect(session.tick(now: 30).isEmpty)
        #expect(session.tick(now: 80).isEmpty)
        #expect(session.tick(now: 90) == [.disconnected])
        #expect(session.closeReason == .pingTimeout)
    }

    @Test("a session opened over the WebSocket needs no confirmation")
    func webSocketHandshake() {
        var session = open(.v4, transport: .websocket)
        #expect(session.nextDeadline == 25)
        #expect(session.tick(now: 20).isEmpty)
        #expect(!session.isClosed)
    }

    @Test("an upgrade answered at its probe but never completed closes after the grace")
    func abandonedUpgrade() {
        var session = open(.v3)
        session.heard(now: 1)
        _ = session.receive(EngineIOPacket(.ping, "probe"), via: .websocket, now: 2)
        #expect(session.upgrading)
        #expect(session.nextDeadline == 12)
        #expect(session.tick(now: 11).isEmpty)
        #expect(session.tick(now: 12.5) == [.disconnected])
        #expect(session.closeReason == .upgradeTimeout)
    }
}
