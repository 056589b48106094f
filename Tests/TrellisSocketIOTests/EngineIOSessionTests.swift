import Testing
@testable import TrellisSocketIO

@Suite("Engine.IO sessions")
struct EngineIOSessionTests {
    let limits = EngineIOLimits(pingInterval: 25, pingTimeout: 20, maximumBufferedPackets: 8)

    func open(_ version: EngineIOVersion, transport: EngineIOSession.Transport = .polling) -> (
        EngineIOSession, [EngineIOSession.Input]
    ) {
        EngineIOSession.open(id: "s1", socketID: "k1", version: version, transport: transport, limits: limits, now: 0)
    }

    @Test("Engine.IO 3: the open packet, then the default namespace's 40 unprompted and without payload")
    func openV3() {
        var (session, inputs) = open(.v3)
        #expect(inputs == [.connected])
        #expect(
            session.drain().map { $0.encodedText(.v3) } == [
                #"0{"sid":"s1","upgrades":["websocket"],"pingInterval":25000,"pingTimeout":20000}"#, "40"
            ])
        #expect(session.isConnected)
    }

    @Test("Engine.IO 4: the client sends 40 and the server answers 40 with the socket id")
    func openV4() {
        var (session, inputs) = open(.v4, transport: .websocket)
        #expect(inputs.isEmpty)
        #expect(
            session.drain().map { $0.encodedText(.v4) } == [
                #"0{"sid":"s1","upgrades":[],"pingInterval":25000,"pingTimeout":20000,"maxPayload":100000}"#
            ])
        #expect(session.receive(EngineIOPacket(.message, "0"), via: .websocket, now: 1).inputs == [.connected])
        #expect(session.drain() == [EngineIOPacket(.message, #"0{"sid":"k1"}"#)])
        #expect(session.receive(EngineIOPacket(.message, "0"), via: .websocket, now: 1).inputs.isEmpty)
    }

    @Test("an event in the default namespace reaches the application")
    func events() {
        var (session, _) = open(.v3)
        let reaction = session.receive(EngineIOPacket(.message, #"2["register","door"]"#), via: .polling, now: 1)
        #expect(reaction.inputs == [.event(name: "register", arguments: [.string("door")])])
    }

    @Test("Engine.IO 4: an event before the client's 40 is malformed")
    func eventBeforeConnect() {
        var (session, _) = open(.v4)
        let reaction = session.receive(EngineIOPacket(.message, #"2["register","door"]"#), via: .polling, now: 1)
        #expect(reaction.inputs == [.malformed(reason: "event_before_connect")])
    }

    @Test(
        "malformed messages are reported with their reason",
        arguments: [
            (EngineIOPacket(.message, "9"), "unknown_socketio_type"),
            (EngineIOPacket(.message, "2[1]"), "invalid_event_data"),
            (EngineIOPacket(.message, #"31["x"]"#), "unsupported_packet"),
            (EngineIOPacket(.message, #"2/other,["register","x"]"#), "unknown_namespace"),
            (EngineIOPacket(binaryMessage: [1]), "binary_message"),
            (EngineIOPacket(.open), "unexpected_open"),
            (EngineIOPacket(.upgrade), "unexpected_upgrade")
        ])
    func malformed(packet: EngineIOPacket, reason: String) {
        var (session, _) = open(.v3)
        _ = session.drain()
        #expect(session.receive(packet, via: .polling, now: 1).inputs == [.malformed(reason: reason)])
        #expect(!session.isClosed)
    }

    @Test(
        "a connect to another namespace is refused in each generation's words",
        arguments: [
            (EngineIOVersion.v3, #"44/admin,"Invalid namespace""#), (.v4, #"44/admin,{"message":"Invalid namespace"}"#)
        ])
    func otherNamespace(version: EngineIOVersion, answer: String) {
        var (session, _) = open(version)
        _ = session.drain()
        _ = session.receive(EngineIOPacket(.message, "0/admin,"), via: .polling, now: 1)
        #expect(session.drain().map { $0.encodedText(version) } == [answer])
    }

    @Test("Engine.IO 3: the client pings and the server answers; silence past interval + timeout closes")
    func clientPings() {
        var (session, _) = open(.v3)
        _ = session.drain()
        _ = session.receive(EngineIOPacket(.ping), via: .polling, now: 10)
        #expect(session.drain() == [EngineIOPacket(.pong)])
        #expect(session.tick(now: 54).isEmpty)
        #expect(session.nextDeadline == 55)
        #expect(session.tick(now: 55.5) == [.disconnected])
        #expect(session.closeReason == .pingTimeout)
        #expect(session.drain() == [EngineIOPacket(.close)])
    }

    @Test("Engine.IO 4: the server pings every interval and closes when no pong comes in time")
    func serverPings() {
        var (session, _) = open(.v4)
        _ = session.receive(EngineIOPacket(.message, "0"), via: .polling, now: 1)
        _ = session.drain()
        #expect(session.tick(now: 24).isEmpty)
        #expect(!session.hasOutgoing)
        #expect(session.tick(now: 25).isEmpty)
        #expect(session.drain() == [EngineIOPacket(.ping)])
        _ = session.receive(EngineIOPacket(.pong), via: .polling, now: 26)
        #expect(session.tick(now: 49).isEmpty)
        #expect(session.tick(now: 50).isEmpty)
        #expect(session.drain() == [EngineIOPacket(.ping)])
        #expect(session.tick(now: 70.5) == [.disconnected])
        #expect(session.closeReason == .pingTimeout)
    }

    @Test("the upgrade: 2probe answered on the WebSocket, a noop for the poll, then 5")
    func upgrade() {
        var (session, _) = open(.v3)
        _ = session.drain()
        let idleWait = session.limits.pingInterval + session.limits.pingTimeout / 2
        #expect(session.longPollWait == idleWait, "an idle poll waits half a ping timeout past the ping interval")
        let probe = session.receive(EngineIOPacket(.ping, "probe"), via: .websocket, now: 1)
        #expect(probe.direct == [EngineIOPacket(.pong, "probe")])
        #expect(session.drain() == [EngineIOPacket(.noop)])
        #expect(session.upgrading)
        #expect(session.longPollWait == EngineIOSession.upgradePollWait, "a poll during the upgrade is answered soon")
        _ = session.receive(EngineIOPacket(.upgrade), via: .websocket, now: 1)
        #expect(session.transport == .websocket)
        #expect(!session.upgrading)
        #expect(session.longPollWait == idleWait)
    }

    @Test("a second probe during an upgrade is refused and does not restart its grace")
    func repeatedProbe() {
        var (session, _) = open(.v3)
        _ = session.receive(EngineIOPacket(.ping, "probe"), via: .websocket, now: 1)
        let again = session.receive(EngineIOPacket(.ping, "probe"), via: .websocket, now: 5)
        #expect(again.inputs == [.malformed(reason: "unexpected_probe")])
        #expect(again.direct.isEmpty)
        #expect(session.nextDeadline <= 1 + session.limits.handshakeGrace)
    }

    @Test("a probe over polling is refused")
    func probeOverPolling() {
        var (session, _) = open(.v3)
        #expect(
            session.receive(EngineIOPacket(.ping, "probe"), via: .polling, now: 1).inputs == [
                .malformed(reason: "unexpected_probe")
            ])
    }

    @Test("a client that does not read is closed when its queue is full")
    func bufferCap() {
        var (session, _) = open(.v3)
        var accepted = 0
        while session.emit("button-press", argumentsJSON: [#""door""#]) { accepted += 1 }
        #expect(accepted == 6)
        #expect(session.closeReason == .bufferFull)
        #expect(session.drain().last == EngineIOPacket(.close))
    }

    @Test("the client's 41 and 1 end the namespace and the session; the server never sends 41")
    func clientDisconnects() {
        var (session, _) = open(.v3)
        #expect(session.receive(EngineIOPacket(.message, "1"), via: .polling, now: 1).inputs == [.disconnected])
        let emitted = session.emit("button-press", argumentsJSON: [#""x""#])
        #expect(!emitted)
        #expect(session.receive(EngineIOPacket(.close), via: .polling, now: 1).inputs.isEmpty)
        #expect(session.closeReason == .clientClosed)
        var (other, _) = open(.v3)
        #expect(other.close(.serverShutdown) == [.disconnected])
        #expect(!other.drain().contains(EngineIOPacket(.message, "1")))
    }
}
