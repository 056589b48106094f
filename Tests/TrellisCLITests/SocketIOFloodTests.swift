import Foundation
import Testing
import TrellisBroker
import TrellisMQTT
import TrellisTestSupport

/// One client that opens handshakes and never follows them up (a page in a reconnect loop, or a
/// hostile one) must not lock the others out: 3,000 handshakes from 127.0.0.2 while a real
/// python-socketio client on 127.0.0.1 connects, registers and receives presses; the flood is
/// held to the per-address limit, refused with 429, counted, logged once; its sessions close
/// after the handshake grace, and the relay's memory comes back to its level.
@Suite("Socket.IO: a handshake flood locks no one out", .serialized)
struct SocketIOFloodTests {
    @Test("3,000 handshakes from one address while another client connects and receives presses")
    func flood() async throws {
        let python = try await SocketIOClientTests.environments.value + "/sio3/bin/python"
        try await withTestBroker { broker in
            let perAddress = 100
            let (trellis, ports) = try await TrellisBinary.startRelay(
                broker: broker, servers: ["--socketio", "--metrics"]
            ) { _ in ["--socketio-max-sessions-per-address", "\(perAddress)"] }
            let url = "http://127.0.0.1:\(ports[0])"
            let metricsURL = "http://127.0.0.1:\(ports[1])/metrics"
            let before = try Self.residentKiB(trellis.process.pid)

            let floodScript = SocketIOClientTests.root.appendingPathComponent("Tests/SocketIO/handshake_flood.py").path
            let flood = try TrellisBinary.start(
                [floodScript, "--url", url, "--count", "3000", "--source", "127.0.0.2"],
                executable: python)
            try await flood.waitForOutput(#"{"event": "started"}"#)

            // The other client connects while the flood runs, and hears every press.
            let button = "door-\(UUID().uuidString.prefix(6))"
            let presser = try await TestClients.connect(to: broker)
            let client = try await SocketIOClientTests.startP2O(
                [
                    "--url", url, "--button", button, "--presses", "3", "--transports", "polling,websocket",
                    "--timeout", "120"
                ],
                environment: "sio3")
            try await client.waitForOutput(#""event": "registered""#, timeout: .seconds(60))
            for _ in 0..<3 {
                try await presser.publishAndWait(topic: "p2o/buttons/\(button)/press", payload: [])
            }
            #expect(try await client.waitForExit(timeout: .seconds(120)) == 0, "\(client.output)")
            let presses = SocketIOClientTests.events(client.output).filter { $0.name == "button-press" }
            #expect(presses.count == 3)

            #expect(try await flood.waitForExit(timeout: .seconds(300)) == 0, "\(flood.output)")
            let summary = try #require(
                SocketIOBrowserTests.events(flood.output).last { $0["event"] as? String == "done" })
            let statuses = try #require(summary["statuses"] as? [String: Int], "\(flood.output)")
            let accepted = statuses["200"] ?? 0, refused = statuses["429"] ?? 0
            #expect(accepted + refused == 3_000, "\(statuses)")
            // At most the limit at once: the first `perAddress`, then as many again each time the
            // grace (10 s, swept every second) closes the ones before.
            let seconds = summary["seconds"] as? Double ?? 0
            #expect(accepted >= perAddress, "\(statuses)")
            #expect(accepted <= perAddress * (Int(seconds / 10) + 2), "\(statuses) in \(seconds) s")

            let (_, metrics) = try await MetricsTests.get(metricsURL)
            #expect(
                metrics.contains(#"trellis_socketio_refused_total{reason="address_limit"} \#(refused)"#), "\(metrics)")
            // Logged once per address and minute, not once per refusal.
            let minutes = Int(seconds / 60) + 1
            let logged = trellis.output.components(separatedBy: "Socket.IO handshakes refused").count - 1
            #expect(logged >= 1 && logged <= minutes, "\(logged) lines")
            #expect(trellis.output.contains("address=127.0.0.2"))

            // The flood's sessions close after the grace: the table and the memory come back.
            try await eventually("the flood's sessions closed", timeout: .seconds(60)) {
                let (_, metrics) = try await MetricsTests.get(metricsURL)
                return metrics.contains("trellis_socketio_sessions 0")
            }
            let (_, closed) = try await MetricsTests.get(metricsURL)
            #expect(
                closed.contains(#"trellis_socketio_sessions_closed_total{reason="handshake_timeout"} \#(accepted)"#),
                "\(closed)")
            let after = try Self.residentKiB(trellis.process.pid)
            print(
                "flood: \(statuses) in \(seconds) s; trellis RSS before the flood \(before) KiB, after it \(after) KiB")
            #expect(after < before + 16 * 1024, "RSS \(before) KiB before, \(after) KiB after")

            #expect(try await trellis.terminate() == 0)
            await presser.shutdown()
        }
    }

    /// The resident set of a process, from /proc.
    static func residentKiB(_ pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }
}
