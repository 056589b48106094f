import Foundation
import Testing
import TrellisBroker
import TrellisMQTT
import TrellisTestSupport

/// The P2O web app's socket flow in headless Chromium (Debian's), with the official socket.io
/// browser clients of the app's generation (socket.io-client 1.4.5, engine.io-client 1.6.8) and of
/// 2.x (2.3.0), served from another origin than Trellis: `connection-response` → `register` →
/// `register-response` with the button → presses over MQTT that the app's reducer counts. Each
/// client with its default transports (polling, then the WebSocket upgrade) and with polling alone,
/// with a button id that is not ASCII, which the 1.x clients mangle unless a poll is answered in
/// the binary framing (and whose POSTs are UTF-8 encoded twice). `Tests/SocketIO/browser/` has the
/// harness; its setup fetches the bundles and Chromium. The page's origin is allowed in
/// `buttons.socketio_allowed_origins`, as a deployment of the web app must; a page of an origin that
/// is not allowed gets nowhere.
@Suite("Socket.IO: the P2O web app in a real browser", .serialized)
struct SocketIOBrowserTests {
    static let root = SocketIOClientTests.root

    /// Chromium, ChromeDriver, Selenium and the bundles, once per test run.
    static let setup: Task<Void, any Error> = Task {
        let script = root.appendingPathComponent("Tests/SocketIO/browser/setup.sh").path
        let setup = try TrellisBinary.start([], executable: script)
        let status = try await setup.waitForExit(timeout: .seconds(900))
        guard status == 0 else { throw TimeoutError(message: "browser setup.sh failed: \(setup.output)") }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var bundle: String
        var transports: String
        var testDescription: String { "socket.io \(bundle) with \(transports) transports" }
    }

    @Test(
        "the web app connects once, registers, and counts presses from MQTT",
        arguments: [
            Case(bundle: "1.x", transports: "default"), Case(bundle: "1.x", transports: "polling"),
            Case(bundle: "2.x", transports: "default"), Case(bundle: "2.x", transports: "polling")
        ])
    func webApp(_ flow: Case) async throws {
        try await Self.setup.value
        try await withTestBroker { broker in
            // The second port is the page's: its origin is the one allowed.
            // At debug level the relay logs each Socket.IO upgrade, queued event and refused packet,
            // which a failure prints beside the page's events.
            let (trellis, ports) = try await TrellisBinary.startRelay(
                broker: broker, servers: ["--socketio"], spare: 1
            ) { ["--log-level", "debug", "--socketio-allowed-origins", "http://127.0.0.1:\($0[1])"] }
            let button = "Tür-🌱-\(UUID().uuidString.prefix(6))"
            let presser = try await TestClients.connect(to: broker)
            // Pressed once before the page registers, so register-response carries the button
            // (the app's reducer cannot count presses of a button it got none for).
            try await presser.publishAndWait(topic: "p2o/buttons/\(button)/press", payload: [])

            let script = Self.root.appendingPathComponent("Tests/SocketIO/browser/p2o_browser.py").path
            let page = try TrellisBinary.start(
                [
                    script, "--url", "http://127.0.0.1:\(ports[0])", "--bundle", flow.bundle,
                    "--button", button, "--transports", flow.transports,
                    "--presses", "2", "--timeout", "60", "--page-port", "\(ports[1])"
                ],
                executable: "/usr/bin/python3")
            try await page.waitForOutput(#""event": "registered""#, timeout: .seconds(60))
            if flow.transports == "default" {
                // The presses are checked to arrive over the upgraded transport: on a busy machine the
                // upgrade may finish after the registration, so wait for it first.
                try await page.waitForOutput(#""event": "upgrade""#, timeout: .seconds(60))
            }
            for _ in 0..<2 {
                try await presser.publishAndWait(topic: "p2o/buttons/\(button)/press", payload: [])
            }
            let status = try await page.waitForExit(timeout: .seconds(60))
            #expect(status == 0, "\(page.output)\n\(trellis.output)")

            let events = Self.events(page.output)
            // One handshake: no reconnect loop.
            #expect(events.last { $0["event"] as? String == "handshakes" }?["count"] as? Int == 1, "\(page.output)")
            #expect(!events.contains { $0["event"] as? String == "error" }, "\(page.output)")
            let registration = try #require(
                events.first { $0["event"] as? String == "register-response" }?["data"] as? [String: Any])
            let state = try #require(registration["button"] as? [String: Any], "\(page.output)")
            #expect(state["id"] as? String == button)
            #expect((state["history"] as? [String])?.count == 1)

            // Both presses reached the page with the id intact, and the reducer counted them.
            let presses = events.filter { $0["event"] as? String == "button-press" }
            #expect(presses.count == 2)
            #expect(presses.allSatisfy { $0["data"] as? String == button }, "\(page.output)")
            #expect(presses.map { $0["count"] as? Int } == [1, 2], "\(page.output)")
            let transport = flow.transports == "default" ? "websocket" : "polling"
            #expect(presses.allSatisfy { $0["transport"] as? String == transport }, "\(page.output)")
            #expect(
                events.contains { $0["event"] as? String == "upgrade" } == (flow.transports == "default"),
                "\(page.output)")
            // The relay's side at debug level: the upgrade when there was one, and each event it queued.
            #expect(
                trellis.output.contains("Socket.IO session upgraded to the WebSocket") == (flow.transports == "default")
            )
            #expect(trellis.output.contains("Socket.IO event queued"), "\(trellis.output)")

            #expect(try await trellis.terminate() == 0)
            await presser.shutdown()
        }
    }

    @Test("a page of an origin that is not allowed never connects")
    func foreignPage() async throws {
        try await Self.setup.value
        try await withTestBroker { broker in
            // The second port is the page's, whose origin is not allowed.
            let (trellis, ports) = try await TrellisBinary.startRelay(broker: broker, servers: ["--socketio"], spare: 1)
            let script = Self.root.appendingPathComponent("Tests/SocketIO/browser/p2o_browser.py").path
            let page = try TrellisBinary.start(
                [
                    script, "--url", "http://127.0.0.1:\(ports[0])", "--bundle", "2.x",
                    "--button", "door", "--presses", "1", "--timeout", "15",
                    "--page-port", "\(ports[1])"
                ], executable: "/usr/bin/python3")
            // The page times out: no handshake completed, nothing registered.
            #expect(try await page.waitForExit(timeout: .seconds(90)) == 2, "\(page.output)")
            let events = Self.events(page.output)
            #expect(
                !events.contains { ["open", "connect", "registered"].contains($0["event"] as? String ?? "") },
                "\(page.output)")
            try await trellis.waitForOutput("Socket.IO requests from a foreign origin refused")
            #expect(trellis.output.contains("origin=http://127.0.0.1:\(ports[1])"), "\(trellis.output)")

            #expect(try await trellis.terminate() == 0)
        }
    }

    /// The JSON lines the harness printed.
    static func events(_ output: String) -> [[String: Any]] {
        output.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("{") else { return nil }
            return try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }
    }
}
