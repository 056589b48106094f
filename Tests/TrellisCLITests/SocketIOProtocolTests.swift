import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TrellisBroker
import TrellisMQTT
import TrellisTestSupport

/// What no Python client reproduces, checked with raw HTTP against `trellis run --socketio`: the
/// iOS client's poll without `EIO` and with `b64=1`, client pings, text framing, CORS for the web
/// app, and the protocol's answers to bad requests, counted on `/metrics`.
@Suite("Socket.IO: raw HTTP")
struct SocketIOProtocolTests {
    struct Reply {
        var status: Int
        var body: String
        var headers: [String: String]
    }

    static func request(_ url: String, method: String = "GET", body: String? = nil, headers: [String: String] = [:]) async throws -> Reply {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.timeoutInterval = 60
        if let body { request.httpBody = Data(body.utf8) }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        var fields: [String: String] = [:]
        for (name, value) in http?.allHeaderFields ?? [:] {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        return Reply(status: http?.statusCode ?? 0, body: String(decoding: data, as: UTF8.self), headers: fields)
    }

    /// `<length>:<packet>` for each packet, as socket.io-client-swift 6 and browsers post.
    static func framed(_ packets: String...) -> String {
        packets.map { "\($0.utf16.count):\($0)" }.joined()
    }

    @Test("the iOS client's handshake, pings, registration and presses; CORS; errors answered and counted; the session cap")
    func rawPolling() async throws {
        try await withTestBroker { broker in
            let state = temporaryDirectory()
            let (trellis, ports) = try await TrellisBinary.startListening(ports: 2, { ports in
                ["run", "--broker", broker.address, "--state", state, "--socketio", "127.0.0.1:\(ports[0])",
                 "--socketio-max-sessions", "3", "--metrics", "\(ports[1])"]
            }, ready: { ports in ports.map { "Server started and listening on 127.0.0.1:\($0)" } })
            let (port, metricsPort) = (ports[0], ports[1])
            try await trellis.waitForOutput("connected to the broker")
            let base = "http://127.0.0.1:\(port)/socket.io/"
            let origin = "http://p2o.example:3000"

            // No EIO parameter means Engine.IO 3: the open packet, `40` without payload, then the
            // service's connection-response, in text framing.
            let handshake = try await Self.request("\(base)?transport=polling&b64=1", headers: ["Origin": origin])
            #expect(handshake.status == 200)
            #expect(handshake.headers["access-control-allow-origin"] == origin)
            #expect(handshake.headers["access-control-allow-credentials"] == "true")
            let sid = try #require(handshake.body.firstMatch(of: /"sid":"([^"]+)"/)?.1).description
            #expect(handshake.body.hasPrefix("\(handshake.body.prefix { $0 != ":" }):0{\"sid\":\"\(sid)\",\"upgrades\":[\"websocket\"],\"pingInterval\":25000,\"pingTimeout\":60000}"))
            #expect(handshake.body.contains(#"2:4046:42["connection-response",{"status":"success"}]"#), "\(handshake.body)")
            #expect(!handshake.body.contains("40{"))
            let session = "\(base)?transport=polling&b64=1&sid=\(sid)"

            // The client pings; the server answers on the next poll.
            let ping = try await Self.request(session, method: "POST", body: Self.framed("2"), headers: ["Origin": origin])
            #expect(ping.status == 200)
            #expect(ping.body == "ok")
            #expect(ping.headers["access-control-allow-origin"] == origin)
            #expect(try await Self.request(session).body == "1:3")

            // Registration and a press from MQTT.
            let button = "bell-\(UUID().uuidString.prefix(6))"
            _ = try await Self.request(session, method: "POST", body: Self.framed(#"42["register","\#(button)"]"#))
            #expect(try await Self.request(session).body == Self.framed(#"42["register-response",{"status":"success"}]"#))
            let presser = try await TestClients.connect(to: broker)
            try await presser.publishAndWait(topic: "p2o/buttons/\(button)/press", payload: [])
            #expect(try await Self.request(session).body == Self.framed(#"42["button-press","\#(button)"]"#))

            // The browser's preflight.
            let preflight = try await Self.request(base + "?EIO=3&transport=polling", method: "OPTIONS",
                                                   headers: ["Origin": origin, "Access-Control-Request-Headers": "content-type"])
            #expect(preflight.status == 204)
            #expect(preflight.headers["access-control-allow-origin"] == origin)
            #expect(preflight.headers["access-control-allow-headers"] == "content-type")

            // Errors, answered with Engine.IO's codes.
            let unsupported = try await Self.request("\(base)?EIO=5&transport=polling")
            #expect(unsupported.status == 400)
            #expect(unsupported.body == #"{"code":5,"message":"Unsupported protocol version"}"#)
            #expect(try await Self.request("\(base)?EIO=3&transport=flashsocket").body == #"{"code":0,"message":"Transport unknown"}"#)
            #expect(try await Self.request("\(base)?EIO=3&transport=polling&sid=unknown").body == #"{"code":1,"message":"Session ID unknown"}"#)
            let malformed = try await Self.request(session, method: "POST", body: "12:4")
            #expect(malformed.status == 400)
            #expect(malformed.body == #"{"code":3,"message":"Bad request"}"#)
            // A malformed payload ends the session.
            #expect(try await Self.request(session).body == #"{"code":1,"message":"Session ID unknown"}"#)

            // At most three sessions at once.
            for _ in 0..<3 {
                #expect(try await Self.request("\(base)?EIO=4&transport=polling").status == 200)
            }
            let full = try await Self.request("\(base)?EIO=4&transport=polling")
            #expect(full.status == 503)
            #expect(full.body == #"{"code":4,"message":"Too many sessions"}"#)

            let metrics = try await Self.request("http://127.0.0.1:\(metricsPort)/metrics").body
            #expect(metrics.contains(#"trellis_socketio_malformed_total{reason="truncated_payload"} 1"#), "\(metrics)")
            #expect(metrics.contains(#"trellis_socketio_refused_total{reason="too_many_sessions"} 1"#))
            #expect(metrics.contains(#"trellis_socketio_refused_total{reason="unsupported_version"} 1"#))
            #expect(metrics.contains(#"trellis_socketio_sessions_closed_total{reason="transport_error"} 1"#))
            #expect(metrics.contains("trellis_socketio_sessions 3"))

            trellis.process.signal(SIGTERM)
            #expect(try await trellis.waitForExit() == 0)
            await presser.shutdown()
        }
    }
}
