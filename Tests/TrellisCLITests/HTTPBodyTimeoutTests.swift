import Foundation
import Testing
import TrellisBroker
import TrellisMQTT
import TrellisTestSupport

/// Requests whose head came and whose body does not, on a running `trellis run`: 1,000 connections
/// each sending a whole head that announces 100,000 bytes of body and then nothing, against the
/// Socket.IO endpoint and the health server at once, hold no more than each cap (they are evicted
/// like head-less ones) and are gone after the body timeout, while `/readyz` answers and a real
/// python-socketio client connects, registers and hears a press; and a body trickled a byte a
/// second, announced or chunked, is cut off at the body timeout, not before.
/// `Tests/HTTP/slow_connections.py` and `Tests/HTTP/trickle_body.py` send them.
@Suite("HTTP servers: request bodies that never come are bounded", .serialized)
struct HTTPBodyTimeoutTests {
    static let trickle = SocketIOClientTests.root.appendingPathComponent("Tests/HTTP/trickle_body.py").path

    @Test(
        "1,000 heads without their bodies on the Socket.IO and health servers while /readyz and a Socket.IO client work"
    )
    func headsWithoutBodies() async throws {
        // The client's environment is made before the servers are flooded, not while they are.
        _ = try await SocketIOClientTests.environments.value
        try await withTestBroker { broker in
            let (trellis, ports) = try await TrellisBinary.startRelay(
                broker: broker, servers: ["--socketio", "--health", "--metrics"])
            let metricsURL = "http://127.0.0.1:\(ports[2])/metrics"

            // The defaults: body timeout 10 s, 512 connections for Socket.IO, 64 for the probes. Lifetimes
            // from 9 s on are the body timeout's; shorter ones were evicted.
            let floods = try await ConnectionFloods.start(
                count: 1000, mode: "head",
                against: [
                    .init(port: ports[0], server: "socketio", cap: 512, path: "/socket.io/?EIO=4&transport=polling"),
                    .init(port: ports[1], server: "health", cap: 64, path: "/readyz")
                ])

            // Both servers are full of bodiless requests: the probe still gets in.
            let (status, body) = try await MetricsTests.get("http://127.0.0.1:\(ports[1])/readyz")
            #expect(status == 200, "\(body)")

            // And a real Socket.IO client connects, registers and hears a press, its POSTs whole.
            let presser = try await TestClients.connect(to: broker)
            let client = try await SocketIOClientTests.hearOnePress(
                url: "http://127.0.0.1:\(ports[0])", button: "door-\(UUID().uuidString.prefix(6))", presser: presser,
                ["--transports", "polling"])
            #expect(SocketIOClientTests.events(client.output).filter { $0.name == "button-press" }.count == 1)

            // Which were closed by the timeout and which evicted the client cannot tell from a lifetime
            // (under load an eviction may come 9 s in); the server's counts can, and the trickle test
            // checks that the timeout never closes a body before its time.
            let summaries = try await floods.finished()
            for done in summaries { print("heads without bodies: \(done)") }
            // Every one closed by the server, counted under why: the body timeout or an eviction.
            try await floods.expectClosed(
                summaries, reason: "body_timeout", metricsURL: metricsURL, output: trellis.output)

            #expect(try await trellis.terminate() == 0)
            await presser.shutdown()
        }
    }

    @Test("a body trickled a byte a second, announced or chunked, is cut off at the body timeout")
    func trickledBody() async throws {
        try await InProcessServers.with(
            [.socketIO, .health, .metrics], environment: ["TRELLIS_HTTP_BODY_TIMEOUT": "4"]
        ) { servers in
            let (socketIO, health, metrics) = (servers.ports[0], servers.ports[1], servers.ports[2])
            func timedOut(_ server: String) async throws -> Int {
                try await InProcessServers.value(
                    #"trellis_http_connections_closed_total{server="\#(server)",reason="body_timeout"}"#, port: metrics)
            }
            let before = (socketIO: try await timedOut("socketio"), health: try await timedOut("health"))

            // A Socket.IO POST to a live session (the server reads its body), and a POST to the health server.
            let runs = [
                ["--socketio"], ["--socketio", "--chunked"], ["--path", "/livez"], ["--path", "/livez", "--chunked"]
            ]
            let outputs = try await withThrowingTaskGroup(of: String.self) { group in
                for run in runs {
                    group.addTask {
                        try await HTTPLimitsTests.python(
                            [
                                Self.trickle, "--port", "\(run.first == "--socketio" ? socketIO : health)",
                                "--length", "100", "--interval", "1", "--timeout", "60"
                            ] + run, timeout: .seconds(90))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for output in outputs {
                let closed = try #require(HTTPLimitsTests.event("closed", output), "\(output)")
                // Not before the body timeout (4 s from the head); a few bytes came meanwhile.
                #expect((closed["after"] as? Double ?? 0) >= 3.9, "\(output)")
                #expect((closed["sent"] as? Int ?? 0) >= 2, "\(output)")
            }

            #expect(try await timedOut("socketio") - before.socketIO == 2)
            #expect(try await timedOut("health") - before.health == 2)
            #expect(servers.log.contains("body_timeout"))
        }
    }
}
