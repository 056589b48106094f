import Foundation
import Testing
import TrellisApplication
import TrellisBroker
import TrellisMQTT
import TrellisTestSupport

@testable import trellis

/// A bridge as a user sets one up: the `bridges:` section of trellis.example.yaml, uncommented and
/// pointed at a second Mosquitto, checked by `trellis config check` and run by `trellis run --config`.
@Suite("Bridge: trellis run with the example's bridges section")
struct BridgeCommandTests {
    /// trellis.example.yaml with its bridges section (up to the blank line that ends it) uncommented
    /// and its URL replaced by `url`.
    static func exampleBridges(url: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let example = try String(contentsOf: root.appendingPathComponent("trellis.example.yaml"), encoding: .utf8)
        let lines = example.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex(of: "# bridges:"), "no bridges section in trellis.example.yaml")
        let end = lines[start...].firstIndex(of: "") ?? lines.endIndex
        let section = lines[start..<end].map { line in
            line.hasPrefix("# ") ? String(line.dropFirst(2)) : String(line)
        }
        return section.joined(separator: "\n").replacingOccurrences(of: "mqtt://broker.example:1883", with: url)
    }

    @Test(
        "config check prints the bridge and its rules; run carries sensors/x up and site/home1/commands/x down; bridge status shows what waits while the upstream broker is away"
    )
    func exampleRuns() async throws {
        try await withTestBroker { local in
            try await withTestBroker { upstream in
                let directory = temporaryDirectory()
                let file = directory + "/trellis.yaml"
                try Self.exampleBridges(url: "mqtt://\(upstream.address)").write(
                    toFile: file, atomically: true, encoding: .utf8)
                let check = try await TrellisBinary.run(["config", "check", file])
                #expect(check.status == 0, "\(check.output)")
                let bridge = "bridges.cloud = mqtt://\(upstream.address), window 64, max_bytes 67108864, max_age 604800"
                #expect(check.output.contains(bridge), "\(check.output)")
                #expect(check.output.contains("bridges.cloud.out[0]: sensors/# → site/home1/sensors/#, qos 1"))
                #expect(check.output.contains("bridges.cloud.in[0]: site/home1/commands/# → commands/#, qos 1"))

                let state = temporaryDirectory()
                let (trellis, ports) = try await TrellisBinary.startRelay(
                    broker: local, servers: ["--health"], state: state
                ) { _ in
                    ["--config", file]
                }
                let cloud = try await TestClients.connect(to: upstream)
                let up = try await MessageCollector.collecting(cloud, subscribedTo: ["site/home1/#"])
                let device = try await TestClients.connect(to: local)
                let down = try await MessageCollector.collecting(device, subscribedTo: ["commands/#"])

                try await device.publishAndWait(topic: "sensors/kitchen", payload: Array("21.5".utf8))
                #expect(try await up.messages(on: "site/home1/sensors/kitchen")[0].text == "21.5")
                try await eventually("a command from upstream arrives locally") {
                    try await cloud.publishAndWait(topic: "site/home1/commands/lamp", payload: Array("on".utf8))
                    return await !down.received(on: "commands/lamp").isEmpty
                }
                #expect(await down.received(on: "commands/lamp").allSatisfy { $0.text == "on" })
                try await trellis.waitForOutput("forwarding to the upstream broker")
                try await trellis.waitForOutput("carrying messages in from the upstream broker")
                let readyz = "http://127.0.0.1:\(ports[0])/readyz"
                func links() async throws -> (status: Int, ready: String?, out: Bool?, into: Bool?) {
                    let (status, body) = try await MetricsTests.get(readyz)
                    let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
                    let cloud = (object?["bridges"] as? [String: Any])?["cloud"] as? [String: [String: Bool]]
                    return (
                        status, object?["status"] as? String, cloud?["out"]?["connected"], cloud?["in"]?["connected"]
                    )
                }
                let linked = try await links()
                #expect(
                    linked.status == 200 && linked.ready == "ready" && linked.out == true && linked.into == true,
                    "\(linked)")

                // The upstream broker away: what is published locally waits in the queue, and
                // `trellis bridge status` reads it from the state while the relay runs.
                upstream.kill()
                // Ready all the same (local work goes on), the links shown down.
                try await eventually("/readyz shows both links down") {
                    let down = try await links()
                    return down.status == 200 && down.ready == "ready" && down.out == false && down.into == false
                }
                for index in 0..<3 {
                    try await device.publishAndWait(topic: "sensors/hall", payload: Array("\(index)".utf8))
                }
                let status = ["bridge", "status", "--config", file, "--state", state]
                try await eventually("bridge status shows the three waiting") {
                    try await TrellisBinary.run(status).output.contains(
                        "  queued: 3 messages, 3 bytes, the oldest kept ")
                }
                let shown = try await TrellisBinary.run(status)
                #expect(shown.status == 0)
                #expect(
                    shown.output.contains("bridge cloud → mqtt://\(upstream.address) (window 64"), "\(shown.output)")
                #expect(
                    shown.output.contains(
                        "  out[0]: sensors/# → site/home1/sensors/#, qos 1 (queued: 3 messages, 3 bytes)"))
                #expect(shown.output.contains("  in[0]: site/home1/commands/# → commands/#, qos 1"))
                let json = try await TrellisBinary.run(status + ["--json"])
                let object = try #require(
                    try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any], "\(json.output)")
                #expect(object["bridge"] as? String == "cloud")
                #expect(object["queued"] as? Int == 3 && object["queued_bytes"] as? Int == 3)
                #expect(object["oldest_kept_at"] is String)
                let byRule = object["queued_by_rule"] as? [String: [String: Int]]
                #expect(byRule == ["sensors/#": ["messages": 3, "bytes": 3]], "\(json.output)")
                await device.shutdown()
                await cloud.shutdown()
                #expect(try await trellis.terminate() == 0)
            }
        }
    }
}

extension BridgeCommandTests {
    @Test("bridge status without a bridge in the configuration says so and exits 1")
    func noBridge() async throws {
        let file = temporaryDirectory() + "/trellis.yaml"
        try "log:\n  level: info\n".write(toFile: file, atomically: true, encoding: .utf8)
        let status = try BridgeCommand.Status.parse(["--state", temporaryDirectory(), "--config", file])
        await #expect {
            try await status.run()
        } throws: {
            $0 is CommandFailure && "\($0)".contains("the configuration names no bridge (\(file))")
        }
    }
}
