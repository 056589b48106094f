import Foundation
import Testing
import TrellisBroker
import TrellisMQTT
import TrellisTestSupport

/// A bridge as a user sets one up: the `bridges:` section of trellis.example.yaml, uncommented and
/// pointed at a second Mosquitto, checked by `trellis config check` and run by `trellis run --config`.
@Suite("Bridge: trellis run with the example's bridges section")
struct BridgeCommandTests {
    /// trellis.example.yaml with its bridges section uncommented and its URL replaced by `url`.
    static func exampleBridges(url: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let example = try String(contentsOf: root.appendingPathComponent("trellis.example.yaml"), encoding: .utf8)
        let lines = example.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex(of: "# bridges:"), "no bridges section in trellis.example.yaml")
        let section = lines[start...].map { line in
            line.hasPrefix("# ") ? String(line.dropFirst(2)) : String(line)
        }
        return section.joined(separator: "\n").replacingOccurrences(of: "mqtt://broker.example:1883", with: url)
    }

    @Test("config check prints the bridge and its rules; run carries sensors/x up and site/home1/commands/x down")
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

                let (trellis, _) = try await TrellisBinary.startRelay(broker: local, servers: []) { _ in
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
                await device.shutdown()
                await cloud.shutdown()
                #expect(try await trellis.terminate() == 0)
            }
        }
    }
}
