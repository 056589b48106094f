import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import TrellisMQTTTypes
import TrellisSocketIO
import TrellisStore
import TrellisTestSupport

@testable import TrellisRelay
@testable import TrellisServer

/// What no Python client reproduces, checked with raw HTTP on the Socket.IO routes of a relay service
/// in this process, over an engine on each store and without a broker (Hummingbird's router test
/// mode; ``withUnconnectedService(_:settings:_:)``): the iOS client's poll
/// without `EIO` and with `b64=1`, client pings, text framing, CORS for the web app, the protocol's
/// answers to bad requests, and the session cap. The real clients run against `trellis run` in
/// `TrellisCLITests` (SocketIOClientTests, SocketIOBrowserTests, SocketIOFloodTests).
@Suite("Socket.IO routes, in process")
struct SocketIORoutesTests {
    struct Reply {
        var status: HTTPResponse.Status
        var body: String
        var headers: HTTPFields
    }

    /// One request through the router.
    static func request(
        _ client: some TestClientProtocol, _ uri: String, method: HTTPRequest.Method = .get,
        body: String? = nil, headers: HTTPFields = [:]
    ) async throws -> Reply {
        try await client.execute(
            uri: uri, method: method, headers: headers,
            body: body.map { ByteBuffer(string: $0) }
        ) { response in
            Reply(status: response.status, body: String(buffer: response.body), headers: response.headers)
        }
    }

    /// `<length>:<packet>` for each packet, as socket.io-client-swift 6 and browsers post.
    static func framed(_ packets: String...) -> String {
        packets.map { "\($0.utf16.count):\($0)" }.joined()
    }

    /// The Socket.IO routes, with `settings`, of `relay`, and their sessions; the origin the requests
    /// come from (``origin``) is allowed.
    static func routes(_ relay: RelayService, _ settings: SocketIOSettings) throws -> (
        app: some ApplicationProtocol, sessions: SocketIOSessions
    ) {
        let logger = Logger(label: "trellis.test.socketio")
        let sessions = SocketIOSessions(relay: relay, settings: settings, logger: logger)
        let origins = SocketIOOrigins(policy: try OriginPolicy.parse(origin).get(), logger: logger)
        return (
            Application(router: SocketIOServer(sessions: sessions, origins: origins, logger: logger).router()), sessions
        )
    }

    static let origin = "http://p2o.example:3000"
    static var fromOrigin: HTTPFields { [.origin: origin] }

    @Test(
        "the iOS client's handshake, pings, registration and presses; CORS; errors answered; the session cap",
        arguments: StoreKind.bothStores)
    func rawPolling(_ kind: StoreKind) async throws {
        try await withUnconnectedService(kind) { relay in
            let (app, sessions) = try Self.routes(relay, SocketIOSettings(maximumSessions: 3))
            try await app.test(.router) { client in
                let base = "/socket.io/"
                // No EIO parameter means Engine.IO 3: the open packet, `40` without payload, then the
                // service's connection-response, in text framing.
                let handshake = try await Self.request(
                    client, "\(base)?transport=polling&b64=1", headers: Self.fromOrigin)
                #expect(handshake.status == .ok)
                #expect(handshake.headers[.accessControlAllowOrigin] == Self.origin)
                #expect(handshake.headers[.accessControlAllowCredentials] == "true")
                let sid = try #require(handshake.body.firstMatch(of: /"sid":"([^"]+)"/)?.1).description
                #expect(
                    handshake.body.hasPrefix(
                        "\(handshake.body.prefix { $0 != ":" }):0{\"sid\":\"\(sid)\",\"upgrades\":[\"websocket\"],\"pingInterval\":25000,\"pingTimeout\":60000}"
                    ))
                #expect(
                    handshake.body.contains(#"2:4046:42["connection-response",{"status":"success"}]"#),
                    "\(handshake.body)")
                #expect(!handshake.body.contains("40{"))
                let session = "\(base)?transport=polling&b64=1&sid=\(sid)"

                // The client pings; the server answers on the next poll.
                let ping = try await Self.request(
                    client, session, method: .post, body: Self.framed("2"), headers: Self.fromOrigin)
                #expect(ping.status == .ok)
                #expect(ping.body == "ok")
                #expect(ping.headers[.accessControlAllowOrigin] == Self.origin)
                #expect(try await Self.request(client, session).body == "1:3")

                // Registration, and a press from MQTT through the relay.
                let button = "bell-\(UUID().uuidString.prefix(6))"
                _ = try await Self.request(
                    client, session, method: .post, body: Self.framed(#"42["register","\#(button)"]"#))
                #expect(
                    try await Self.request(client, session).body
                        == Self.framed(#"42["register-response",{"status":"success"}]"#))
                // As the relay's message loop handles a press from the broker and sends its answers on.
                let press = MQTTMessage(topic: "p2o/buttons/\(button)/press", payload: [], qos: .atLeastOnce)
                relay.send(
                    await relay.engine.handle(press, at: Date()), of: press, received: Date(), engine: relay.engine)
                #expect(
                    try await Self.request(client, session).body == Self.framed(#"42["button-press","\#(button)"]"#))

                // The browser's preflight.
                let preflight = try await Self.request(
                    client, base + "?EIO=3&transport=polling", method: .options,
                    headers: [.origin: Self.origin, .accessControlRequestHeaders: "content-type"])
                #expect(preflight.status == .noContent)
                #expect(preflight.headers[.accessControlAllowOrigin] == Self.origin)
                #expect(preflight.headers[.accessControlAllowHeaders] == "content-type")

                // A page of another origin: refused on every method, its origin never echoed.
                for method in [HTTPRequest.Method.get, .post, .options] {
                    let foreign = try await Self.request(
                        client, session, method: method, headers: [.origin: "http://evil.example"])
                    #expect(foreign.status == .forbidden, "\(method)")
                    #expect(foreign.headers[.accessControlAllowOrigin] == nil)
                    #expect(foreign.body.contains("origin may not use the endpoint"))
                }

                // Errors, answered with Engine.IO's codes.
                let unsupported = try await Self.request(client, "\(base)?EIO=5&transport=polling")
                #expect(unsupported.status == .badRequest)
                #expect(unsupported.body == #"{"code":5,"message":"Unsupported protocol version"}"#)
                #expect(
                    try await Self.request(client, "\(base)?EIO=3&transport=flashsocket").body
                        == #"{"code":0,"message":"Transport unknown"}"#)
                #expect(
                    try await Self.request(client, "\(base)?EIO=3&transport=polling&sid=unknown").body
                        == #"{"code":1,"message":"Session ID unknown"}"#)
                let malformed = try await Self.request(client, session, method: .post, body: "12:4")
                #expect(malformed.status == .badRequest)
                #expect(malformed.body == #"{"code":3,"message":"Bad request"}"#)
                // A malformed payload ends the session.
                #expect(try await Self.request(client, session).body == #"{"code":1,"message":"Session ID unknown"}"#)

                // At most three sessions at once.
                for _ in 0..<3 {
                    #expect(try await Self.request(client, "\(base)?EIO=4&transport=polling").status == .ok)
                }
                let full = try await Self.request(client, "\(base)?EIO=4&transport=polling")
                #expect(full.status == .serviceUnavailable)
                #expect(full.body == #"{"code":4,"message":"Too many sessions"}"#)
                #expect(sessions.count == 3)
            }
        }
    }

    @Test("sessions from one address beyond the per-address cap are refused with 429")
    func perAddressCap() async throws {
        try await withUnconnectedService(.inMemory) { relay in
            let (app, _) = try Self.routes(relay, SocketIOSettings(maximumSessionsPerAddress: 2))
            try await app.test(.router) { client in
                var statuses: [HTTPResponse.Status] = []
                for _ in 0..<3 {
                    statuses.append(try await Self.request(client, "/socket.io/?EIO=4&transport=polling").status)
                }
                #expect(statuses == [.ok, .ok, .tooManyRequests])
            }
        }
    }

    @Test("while an upgrade is under way, a poll that finds nothing queued is answered with a noop at once")
    func pollDuringUpgrade() async throws {
        try await withUnconnectedService(.inMemory) { relay in
            let (app, sessions) = try Self.routes(relay, SocketIOSettings())
            try await app.test(.router) { client in
                let handshake = try await Self.request(client, "/socket.io/?transport=polling&b64=1")
                let sid = try #require(handshake.body.firstMatch(of: /"sid":"([^"]+)"/)?.1).description
                let poll = "/socket.io/?transport=polling&b64=1&sid=\(sid)"
                // The probe, as the WebSocket handler hands it over: `3probe` goes back on the
                // WebSocket, and a noop is queued for the poll the client has open.
                let connection = try #require(sessions.find(sid))
                let direct = await sessions.receive(EngineIOPacket(.ping, "probe"), via: .websocket, on: connection)
                #expect(direct == [EngineIOPacket(.pong, "probe")])
                #expect(try await Self.request(client, poll).body == "1:6")
                // The client's next poll finds nothing queued (its answer came before `3probe`). It must
                // still complete soon, or the client never pauses polling to send `5`. Outside an
                // upgrade it would wait 55 s; this waits at most 20 for it.
                let answered = try await withThrowingTaskGroup(of: String?.self) { group in
                    group.addTask { try await Self.request(client, poll).body }
                    group.addTask {
                        try await Task.sleep(for: .seconds(20))
                        return nil
                    }
                    defer { group.cancelAll() }
                    return try await group.next() ?? nil
                }
                #expect(answered == "1:6")
                _ = await sessions.receive(EngineIOPacket(.upgrade), via: .websocket, on: connection)
                #expect(connection.transport == .websocket)
            }
        }
    }

    @Test("an event queued after the upgrade completes goes to the WebSocket, not to a poll still open")
    func pollOpenAcrossUpgrade() async throws {
        try await withUnconnectedService(.inMemory) { relay in
            let (app, sessions) = try Self.routes(relay, SocketIOSettings())
            try await app.test(.router) { client in
                // A poll opened during an upgrade waits at most 0.1 s: a pause of the test longer than
                // that answers the poll before the event exists, and proves nothing. So the scenario
                // runs in a new session until the poll was still open when the event was queued.
                var exercised = false
                for _ in 0..<10 where !exercised {
                    let handshake = try await Self.request(client, "/socket.io/?transport=polling&b64=1")
                    let sid = try #require(handshake.body.firstMatch(of: /"sid":"([^"]+)"/)?.1).description
                    let poll = "/socket.io/?transport=polling&b64=1&sid=\(sid)"
                    let connection = try #require(sessions.find(sid))
                    _ = await sessions.receive(EngineIOPacket(.ping, "probe"), via: .websocket, on: connection)
                    #expect(try await Self.request(client, poll).body == "1:6")
                    // A poll open while the upgrade completes (a client that sent `5` without pausing
                    // polling first), then an event for the client.
                    let open = Task { try await Self.request(client, poll) }
                    let deadline = ContinuousClock.now + .seconds(20)
                    while !connection.pollInProgress, ContinuousClock.now < deadline { await Task.yield() }
                    _ = await sessions.receive(EngineIOPacket(.upgrade), via: .websocket, on: connection)
                    #expect(connection.transport == .websocket)
                    #expect(connection.update { $0.emit("button-press", argumentsJSON: [#""b1""#]) })
                    exercised = connection.pollInProgress
                    let answer = try await open.value
                    #expect(!answer.body.contains("button-press"), "\(answer.body)")
                    // The event waits for the WebSocket's writer.
                    let waiting = connection.update { $0.drain() }
                    #expect(
                        waiting.contains { $0.type == .message && ($0.text ?? "").contains("button-press") },
                        "\(waiting)")
                    await sessions.close(connection, .serverShutdown)
                }
                #expect(exercised, "the poll had always answered before the event was queued")
            }
        }
    }
}
