import ArgumentParser
import Foundation
import Testing
import TrellisApplication
import TrellisBroker
import TrellisMQTT
import TrellisServer
import TrellisTestSupport

@testable import trellis

/// `/livez`, `/readyz` and `trellis health` against a running relay with the probes on their own
/// (`--health`, no metrics): alive and ready; the broker gone makes it unready, naming the broker,
/// and never not alive; probes write nothing; nothing listening is a clear failure.
@Suite("Probes: /livez, /readyz and trellis health")
struct HealthProbeTests {
    static func health(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await TrellisBinary.run(["health"] + arguments, timeout: .seconds(30))
    }

    @Test("alive and ready; the broker gone: not ready, naming it, still alive; back: ready")
    func brokerOutage() async throws {
        try await withTestBroker { broker in
            let state = temporaryDirectory()
            let (trellis, ports) = try await TrellisBinary.startRelay(
                broker: broker, servers: ["--health"], state: state)
            let address = "127.0.0.1:\(ports[0])"

            let live = try await Self.health(["--address", address])
            #expect(live.status == 0 && live.output == "alive\n", "\(live.output)")
            try await eventually("ready") { try await Self.health(["--address", address, "--ready"]).status == 0 }
            #expect(try await Self.health(["--address", address, "--ready"]).output == "ready\n")
            let (status, body) = try await MetricsTests.get("http://\(address)/readyz")
            #expect(status == 200)
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
            let checks = try #require(answer["checks"] as? [String: [String: Any]])
            #expect(Set(checks.keys) == ["broker", "store", "backlog"])
            #expect(checks.values.allSatisfy { $0["ok"] as? Bool == true }, "\(body)")

            // Probes cost no write: the database files do not change under 30 of them.
            let before = Self.databaseFiles(state)
            for _ in 0..<30 { _ = try await MetricsTests.get("http://\(address)/readyz") }
            #expect(Self.databaseFiles(state) == before)

            broker.kill()
            try await eventually("not ready", timeout: .seconds(30)) {
                try await Self.health(["--address", address, "--ready"]).status == 1
            }
            let unready = try await Self.health(["--address", address, "--ready"])
            #expect(unready.output == "unavailable: broker: not connected to the broker\n", "\(unready.output)")
            let (unreadyStatus, _) = try await MetricsTests.get("http://\(address)/readyz")
            #expect(unreadyStatus == 503)
            #expect(try await Self.health(["--address", address]).status == 0, "alive whatever the broker does")

            try await broker.restart()
            try await eventually("ready again", timeout: .seconds(60)) {
                try await Self.health(["--address", address, "--ready"]).status == 0
            }
            #expect(try await trellis.terminate() == 0)
        }
    }

    @Test("nothing listening, or no address: exit 1 with the reason")
    func nothingThere() async throws {
        // A port held without listening: nothing answers there, and nothing else can start to.
        let nobody = try LoopbackSocket(listening: false)
        let answer = HTTPProbe.ask(host: "127.0.0.1", port: nobody.port, ready: true, timeout: 3)
        #expect(!answer.healthy)
        #expect(answer.line.hasPrefix("not answering at 127.0.0.1:\(nobody.port)/readyz: "), "\(answer.line)")
        // `trellis health` reads a bare port as one on 127.0.0.1, and refuses an address without a port.
        #expect(ListenAddress("\(nobody.port)").map { "\($0.host):\($0.port)" } == "127.0.0.1:\(nobody.port)")
        let bad = try HealthCommand.parse(["--address", "localhost"])
        await #expect {
            try await bad.run()
        } throws: {
            $0 is ValidationError && "\($0)".contains("expected HOST:PORT")
        }
    }

    /// Size and modification time of each file of the SQLite state.
    static func databaseFiles(_ directory: String) -> [String: String] {
        var files: [String: String] = [:]
        for name in ["trellis.sqlite", "trellis.sqlite-wal"] {
            let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)
            files[name] = "\(attributes?[.size] ?? 0) \(attributes?[.modificationDate] ?? "")"
        }
        return files
    }
}
