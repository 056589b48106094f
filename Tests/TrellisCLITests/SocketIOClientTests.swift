import Foundation
import Testing
import TrellisBroker
import TrellisMQTT
import TrellisTestSupport

/// The P2O flow with real python-socketio clients against `trellis run --socketio` on a real
/// Mosquitto: python-socketio 4.6.1 / python-engineio 3.14.2 (Engine.IO 3, polling then the
/// WebSocket upgrade, or polling alone with binary-framed POSTs) and python-socketio 5 (Engine.IO 4).
/// Presses over Socket.IO need the configured token: in the query string (Engine.IO 3), the
/// CONNECT's auth (Engine.IO 4), or a header of the handshake (`X-Trellis-Press-Token`,
/// `Authorization: Bearer`, both generations); without it, or with a wrong one, a press is refused
/// and not applied.
@Suite("Socket.IO: real python-socketio clients", .serialized)
struct SocketIOClientTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Creates the two virtual environments once per test run (`make test` has made them already).
    static let environments: Task<String, any Error> = Task {
        let script = root.appendingPathComponent("Tests/SocketIO/setup-venvs.sh").path
        let setup = try TrellisBinary.start([], executable: script)
        let status = try await setup.waitForExit(timeout: .seconds(900))
        guard status == 0 else { throw TimeoutError(message: "setup-venvs.sh failed: \(setup.output)") }
        let environment = ProcessInfo.processInfo.environment
        if let cache = environment["TRELLIS_CACHE"] { return cache }
        let base = environment["XDG_CACHE_HOME"] ?? (NSHomeDirectory() + "/.cache")
        return base + "/trellis"
    }

    /// Starts the P2O Python client (Tests/SocketIO/p2o_client.py) in the python-socketio environment
    /// `environment` (`sio5`, or `sio3` for python-socketio 4) with `arguments` (`--url`, `--button`,
    /// `--presses`, `--transports`, …; its help lists them).
    static func startP2O(_ arguments: [String], environment: String = "sio5") async throws -> TrellisBinary {
        let python = try await environments.value + "/\(environment)/bin/python"
        let script = root.appendingPathComponent("Tests/SocketIO/p2o_client.py").path
        return try TrellisBinary.start([script] + arguments, executable: python)
    }

    /// Starts the P2O client on `url` for `button`, with `arguments` beside those, to hear one press;
    /// presses the button over MQTT with `presser` once the client registered, and expects the client
    /// to exit 0, having heard it. Returns the client, whose output holds its events.
    @discardableResult
    static func hearOnePress(
        url: String, button: String, presser: MQTTClient, _ arguments: [String]
    ) async throws -> TrellisBinary {
        try await hearOnePress(url: url, button: button, arguments) {
            try await presser.publishAndWait(topic: "p2o/buttons/\(button)/press", payload: [])
        }
    }

    /// Starts the P2O client on `url` for `button`, with `arguments` beside those, to hear one press;
    /// runs `press` once the client registered, and expects the client to exit 0, having heard it.
    @discardableResult
    static func hearOnePress(
        url: String, button: String, _ arguments: [String], press: () async throws -> Void
    ) async throws -> TrellisBinary {
        let client = try await startP2O(
            ["--url", url, "--button", button, "--presses", "1", "--timeout", "60"] + arguments)
        try await client.waitForOutput(#""event": "registered""#, timeout: .seconds(60))
        try await press()
        #expect(try await client.waitForExit(timeout: .seconds(60)) == 0, "\(client.output)")
        return client
    }

    /// The token the client presents with its press.
    enum Token: String, Sendable {
        case valid, wrong, none
        /// In `X-Trellis-Press-Token`, in `Authorization: Bearer`, and a wrong one in the former.
        case header, bearer, wrongHeader = "wrong-header"

        var isValid: Bool { self == .valid || self == .header || self == .bearer }
        var isWrong: Bool { self == .wrong || self == .wrongHeader }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var environment: String
        var transports: String
        var finalTransport: String
        var token = Token.valid
        /// Whether Trellis runs with a press token file; without one, presses over Socket.IO are off.
        var pressesOn = true
        var testDescription: String {
            "\(environment) over \(transports), token \(token.rawValue)\(pressesOn ? "" : ", presses off")"
        }
    }

    @Test(
        "connection-response, register-response, and button-press for presses from MQTT and from Socket.IO",
        arguments: [
            Case(environment: "sio3", transports: "polling,websocket", finalTransport: "websocket"),
            Case(environment: "sio3", transports: "polling", finalTransport: "polling"),
            Case(environment: "sio5", transports: "polling,websocket", finalTransport: "websocket"),
            Case(environment: "sio5", transports: "websocket", finalTransport: "websocket"),
            Case(environment: "sio3", transports: "polling", finalTransport: "polling", token: .wrong),
            Case(environment: "sio5", transports: "websocket", finalTransport: "websocket", token: .none),
            Case(environment: "sio5", transports: "polling,websocket", finalTransport: "websocket", pressesOn: false),
            Case(environment: "sio3", transports: "polling,websocket", finalTransport: "websocket", token: .header),
            Case(environment: "sio5", transports: "websocket", finalTransport: "websocket", token: .bearer),
            Case(environment: "sio3", transports: "polling", finalTransport: "polling", token: .wrongHeader)
        ])
    func p2oFlow(_ flow: Case) async throws {
        // The client's environment is made before the relay starts, not while it runs.
        _ = try await Self.environments.value
        try await withTestBroker { broker in
            let stateDirectory = temporaryDirectory()
            let tokenFile = stateDirectory + "-press-token"
            try "p2o-press-\(UUID().uuidString)\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
            let token = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .newlines)
            let (trellis, ports) = try await TrellisBinary.startRelay(
                broker: broker, servers: ["--socketio", "--metrics"], state: stateDirectory
            ) { _ in flow.pressesOn ? ["--socketio-press-token-file", tokenFile] : [] }
            let port = ports[0]
            let button = "door-\(UUID().uuidString.prefix(6))"

            // An MQTT client registered for the same button: it must see the Socket.IO press too.
            let (watcher, inbox) = try await TestClients.connectCollecting(to: broker, "p2o/clients/watcher/+")
            try await watcher.publishAndWait(topic: "p2o/clients/watcher/register", payload: Array(button.utf8))
            try await inbox.messages(on: "p2o/clients/watcher/register-response")

            let applied = flow.token.isValid && flow.pressesOn
            let pressed = applied ? 3 : 2
            var arguments = [
                "--url", "http://127.0.0.1:\(port)", "--button", button, "--presses", "\(pressed)", "--press",
                "--transports", flow.transports, "--timeout", "60"
            ]
            switch flow.token {
            case .valid: arguments += ["--token", token]
            case .wrong: arguments += ["--token", token + "x"]
            case .none: break
            case .header: arguments += ["--token", token, "--token-header", "x-trellis"]
            case .bearer: arguments += ["--token", token, "--token-header", "bearer"]
            case .wrongHeader: arguments += ["--token", token + "x", "--token-header", "x-trellis"]
            }
            let client = try await Self.startP2O(arguments, environment: flow.environment)
            try await client.waitForOutput(#""event": "registered""#, timeout: .seconds(60))
            for _ in 0..<2 {
                try await watcher.publishAndWait(topic: "p2o/buttons/\(button)/press", payload: [])
            }
            let status = try await client.waitForExit(timeout: .seconds(90))
            #expect(status == 0, "\(client.output)\n\(trellis.output)")

            let events = Self.events(client.output)
            #expect(
                events.first { $0.name == "connection-response" }?.data as? [String: String] == ["status": "success"],
                "\(client.output)")
            let registrations = events.filter { $0.name == "register-response" }
            try #require(registrations.count == 2, "\(client.output)\n\(trellis.output)")
            // The first registration: the button was never pressed, so there is no button object.
            #expect(registrations[0].data as? [String: String] == ["status": "success"])
            // The second: the button with its presses (the Socket.IO one only with the token, whose
            // refusal was handled before this registration); a Socket.IO client's count is 0.
            let second = try #require(registrations[1].data as? [String: Any])
            let state = try #require(second["button"] as? [String: Any])
            #expect(state["id"] as? String == button)
            #expect(state["count"] as? Int == 0)
            #expect((state["history"] as? [String])?.count == pressed)
            let presses = events.filter { $0.name == "button-press" }
            #expect(presses.count == pressed)
            #expect(presses.allSatisfy { $0.data as? String == button })
            #expect(presses.last?.transport == flow.finalTransport)
            let refusals = events.filter { $0.name == "press-response" }
            if applied {
                #expect(refusals.isEmpty, "\(client.output)")
            } else {
                #expect(refusals.count == 1)
                #expect((refusals.first?.data as? [String: String])?["status"] == "failed", "\(client.output)")
                let (_, metrics) = try await MetricsTests.get("http://127.0.0.1:\(ports[1])/metrics")
                let reason = !flow.pressesOn ? "presses_off" : flow.token.isWrong ? "wrong_token" : "missing_token"
                #expect(
                    metrics.contains(#"trellis_socketio_presses_refused_total{reason="\#(reason)"} 1"#), "\(metrics)")
            }

            // The MQTT client saw every press that was applied, the Socket.IO one included.
            let fannedOut = try await inbox.messages(on: "p2o/clients/watcher/button-press", count: pressed)
            #expect(fannedOut.allSatisfy { $0.text == button })
            #expect(await inbox.received(on: "p2o/clients/watcher/button-press").count == pressed)

            #expect(try await trellis.terminate() == 0)
            await watcher.shutdown()
        }
    }

    /// The JSON lines the client script printed.
    static func events(_ output: String) -> [(name: String, data: Any?, transport: String?)] {
        output.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("{"),
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let name = object["event"] as? String
            else { return nil }
            return (name, object["data"], object["transport"] as? String)
        }
    }
}
