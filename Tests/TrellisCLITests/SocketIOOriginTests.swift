import Foundation
import Testing
import TrellisTestSupport

/// Which web pages may use the Socket.IO endpoint of `trellis run` (its servers in this process): requests without an
/// `Origin` (apps, scripts), the endpoint's own origin and the configured ones pass on every
/// request (handshake, poll, POST, preflight, WebSocket upgrade), with only an allowed origin named
/// in `Access-Control-Allow-Origin`; a foreign page is refused on each (403, the upgrade not made),
/// counted, and logged once per origin. A real python-socketio client sending a foreign `Origin`
/// is refused; one sending a configured origin connects and hears a press.
/// `Tests/SocketIO/origin_probe.py` sends the raw requests.
@Suite("Socket.IO: allowed origins", .serialized)
struct SocketIOOriginTests {
    @Test("own, configured and no origin pass; foreign origins are refused on polling and the WebSocket upgrade")
    func origins() async throws {
        // The client's environment is made before the servers start, not while they run.
        _ = try await SocketIOClientTests.environments.value
        try await InProcessServers.with(
            [.socketIO, .metrics],
            flags: ["buttons.socketio_allowed_origins": .string("http://p2o.example:3000, https://Buttons.Example")]
        ) { servers in
            let url = "http://127.0.0.1:\(servers.ports[0])"
            let probe = SocketIOClientTests.root.appendingPathComponent("Tests/SocketIO/origin_probe.py").path
            let refusals = #"trellis_socketio_refused_total{reason="foreign_origin"}"#
            let before = try await InProcessServers.value(refusals, port: servers.ports[1])

            func ask(_ origin: String?) async throws -> [String: Any] {
                let output = try await HTTPLimitsTests.python(
                    [probe, "--url", url] + (origin.map { ["--origin", $0] } ?? []), timeout: .seconds(30))
                return try #require(SocketIOBrowserTests.events(output).last, "\(output)")
            }
            func status(_ answer: [String: Any], _ request: String) -> Int? {
                (answer[request] as? [String: Any])?["status"] as? Int
            }
            func allowOrigin(_ answer: [String: Any], _ request: String) -> String? {
                (answer[request] as? [String: Any])?["acao"] as? String
            }

            // Allowed: none, the endpoint's own, and each configured one (case and default port aside).
            for origin in [nil, url, "http://p2o.example:3000", "https://buttons.example:443"] {
                let answer = try await ask(origin)
                for request in ["handshake", "poll", "post"] {
                    #expect(status(answer, request) == 200, "\(origin ?? "none") \(request): \(answer)")
                    #expect(allowOrigin(answer, request) == origin ?? "*", "\(origin ?? "none") \(request): \(answer)")
                }
                #expect(status(answer, "preflight") == 204, "\(answer)")
                #expect(status(answer, "websocket") == 101, "\(origin ?? "none"): \(answer)")
                if origin != nil {
                    #expect((answer["handshake"] as? [String: Any])?["credentials"] as? String == "true")
                }
            }

            // Foreign: another site, and the same host on another port. Never echoed.
            let foreign = ["http://evil.example", "http://127.0.0.1:\(servers.ports[1])"]
            for origin in foreign {
                let answer = try await ask(origin)
                for request in ["handshake", "poll", "post", "preflight"] {
                    #expect(status(answer, request) == 403, "\(origin) \(request): \(answer)")
                    #expect(allowOrigin(answer, request) == nil, "\(origin) \(request): \(answer)")
                }
                #expect(
                    (answer["handshake_body"] as? String)?.contains("origin may not use the endpoint") == true,
                    "\(answer)")
                #expect(status(answer, "websocket") == 400, "\(origin): \(answer)")
            }

            // A real client: refused with a foreign Origin, served with a configured one.
            let refused = try await SocketIOClientTests.startP2O([
                "--url", url, "--button", "door", "--transports", "polling",
                "--origin", "http://evil.example", "--timeout", "20"
            ])
            #expect(try await refused.waitForExit(timeout: .seconds(60)) == 3, "\(refused.output)")
            // Polling alone: websocket-client adds an Origin of its own beside the one given, and a
            // request naming two origins is refused (the probe above covers the upgrade).
            let button = "door-\(UUID().uuidString.prefix(6))"
            try await SocketIOClientTests.hearOnePress(
                url: url, button: button, ["--transports", "polling", "--origin", "http://p2o.example:3000"]
            ) { servers.press(button) }

            // Every foreign request counted (five per probe, one for the refused client's handshake);
            // one log line per origin.
            let counted = try await InProcessServers.value(refusals, port: servers.ports[1]) - before
            #expect(counted >= 5 * foreign.count + 1, "\(counted)")
            #expect(servers.logged("Socket.IO requests from a foreign origin refused") == foreign.count)
        }
    }
}
