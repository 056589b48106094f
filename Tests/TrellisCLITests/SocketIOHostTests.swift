import Foundation
import Testing
import TrellisTestSupport

/// DNS rebinding against the servers of `trellis run` (in this process): a page at `http://evil.example:PORT` whose name is
/// made to resolve to the Pi sends `Host` and `Origin` both `evil.example:PORT`. Its Socket.IO
/// handshake, poll, POST, preflight and WebSocket upgrade are refused (421, the upgrade not made), and
/// so is its same-origin GET without `Origin`; so are its reads of the metrics and health servers; a real
/// python-socketio client sending what such a page sends is refused, one reaching the endpoint by a
/// name in `http.allowed_hosts` connects and hears a press. Apps and scripts that dial a name and are
/// not pages (no `Origin`, no `Sec-Fetch-Site`) are served. Requests are made to 127.0.0.1 with the
/// `Host` a page would send (`Tests/SocketIO/origin_probe.py`, `Tests/HTTP/host_probe.py`).
@Suite("HTTP servers: DNS rebinding", .serialized)
struct SocketIOHostTests {
    static let probe = SocketIOClientTests.root.appendingPathComponent("Tests/SocketIO/origin_probe.py").path
    static let hostProbe = SocketIOClientTests.root.appendingPathComponent("Tests/HTTP/host_probe.py").path

    @Test("a rebound page is refused on every route; listed names, IP addresses, localhost and apps are served")
    func rebinding() async throws {
        // The client's environment is made before the relay starts, not while it runs.
        _ = try await SocketIOClientTests.environments.value
        try await InProcessServers.with(
            [.socketIO, .metrics, .health], environment: ["TRELLIS_HTTP_ALLOWED_HOSTS": "trellis.lan"],
            flags: ["buttons.socketio_allowed_origins": .string("http://p2o.example:3000")]
        ) { servers in
            let ports = servers.ports
            let url = "http://127.0.0.1:\(ports[0])", evil = "evil.example:\(ports[0])"
            let socketIORefusals = #"trellis_socketio_refused_total{reason="unknown_host"}"#
            func refusals(_ server: String) -> String {
                #"trellis_http_requests_refused_total{server="\#(server)",reason="unknown_host"}"#
            }
            let before = (
                socketIO: try await InProcessServers.value(socketIORefusals, port: ports[1]),
                metrics: try await InProcessServers.value(refusals("metrics"), port: ports[1]),
                health: try await InProcessServers.value(refusals("health"), port: ports[1])
            )

            func ask(host: String, origin: String?, fetchSite: String? = nil) async throws -> [String: Any] {
                let output = try await HTTPLimitsTests.python(
                    [Self.probe, "--url", url, "--host", host] + (origin.map { ["--origin", $0] } ?? [])
                        + (fetchSite.map { ["--fetch-site", $0] } ?? []), timeout: .seconds(30))
                return try #require(SocketIOBrowserTests.events(output).last, "\(output)")
            }
            func status(_ answer: [String: Any], _ request: String) -> Int? {
                (answer[request] as? [String: Any])?["status"] as? Int
            }

            // The rebound page: every request refused with 421, never a CORS header.
            let rebound = try await ask(host: evil, origin: "http://\(evil)")
            for request in ["handshake", "poll", "post", "preflight"] {
                #expect(status(rebound, request) == 421, "\(request): \(rebound)")
                #expect((rebound[request] as? [String: Any])?["acao"] as? String == nil, "\(request): \(rebound)")
            }
            #expect((rebound["handshake_body"] as? String)?.contains("http.allowed_hosts") == true, "\(rebound)")
            #expect(status(rebound, "websocket") == 400, "\(rebound)")
            // Its same-origin GET, which carries no Origin.
            #expect(status(try await ask(host: evil, origin: nil, fetchSite: "same-origin"), "handshake") == 421)

            // Served: a listed name, localhost, an IP address (each as its own origin), a configured
            // origin whatever the name, and an app dialling any name (no Origin, no Sec-Fetch-Site).
            let served: [(String, String?)] = [
                ("trellis.lan:\(ports[0])", "http://trellis.lan:\(ports[0])"),
                ("localhost:\(ports[0])", "http://localhost:\(ports[0])"),
                ("127.0.0.1:\(ports[0])", url), (evil, "http://p2o.example:3000"), (evil, nil)
            ]
            for (host, origin) in served {
                let answer = try await ask(host: host, origin: origin)
                for request in ["handshake", "poll", "post"] {
                    #expect(status(answer, request) == 200, "\(host) \(origin ?? "none") \(request): \(answer)")
                }
                #expect(status(answer, "websocket") == 101, "\(host) \(origin ?? "none"): \(answer)")
            }

            // The metrics and health servers: a page's read by an unknown name refused; Prometheus
            // and an address typed into a browser are not pages. (/livez: a relay without a broker
            // is alive and not ready, and the host check comes before either.)
            for port in [ports[1], ports[2]] {
                func get(_ host: String, origin: String? = nil, fetchSite: String? = nil) async throws -> Int? {
                    let output = try await HTTPLimitsTests.python(
                        [Self.hostProbe, "--port", "\(port)", "--path", "/livez", "--host", host]
                            + (origin.map { ["--origin", $0] } ?? []) + (fetchSite.map { ["--fetch-site", $0] } ?? []),
                        timeout: .seconds(30))
                    return SocketIOBrowserTests.events(output).last?["status"] as? Int
                }
                let name = "evil.example:\(port)"
                #expect(try await get(name, fetchSite: "same-origin") == 421)
                #expect(try await get(name, origin: "http://\(name)") == 421)
                #expect(try await get(name) == 200)
                #expect(try await get(name, fetchSite: "none") == 200)
                #expect(try await get("trellis.lan:\(port)", fetchSite: "same-origin") == 200)
                #expect(try await get("127.0.0.1:\(port)", fetchSite: "same-origin") == 200)
            }

            // A real client sending what the rebound page sends is refused; by a listed name it is served.
            let refused = try await SocketIOClientTests.startP2O([
                "--url", url, "--button", "door", "--transports", "polling",
                "--host", evil, "--origin", "http://\(evil)", "--timeout", "20"
            ])
            #expect(try await refused.waitForExit(timeout: .seconds(60)) == 3, "\(refused.output)")
            let listed = "trellis.lan:\(ports[0])"
            let button = "door-\(UUID().uuidString.prefix(6))"
            try await SocketIOClientTests.hearOnePress(
                url: url, button: button, ["--transports", "polling", "--host", listed, "--origin", "http://\(listed)"]
            ) { servers.press(button) }

            // Counted; logged once per host name and server, not once per request.
            let socketIO = try await InProcessServers.value(socketIORefusals, port: ports[1]) - before.socketIO
            #expect(socketIO >= 6, "\(socketIO)")
            #expect(try await InProcessServers.value(refusals("metrics"), port: ports[1]) - before.metrics == 2)
            #expect(try await InProcessServers.value(refusals("health"), port: ports[1]) - before.health == 2)
            #expect(servers.logged("Socket.IO requests from a web page for an unknown host name refused") == 1)
            #expect(servers.logged("HTTP requests from a web page for an unknown host name refused") == 2)
        }
    }
}
