import Foundation
import Testing
import TrellisBroker
import TrellisCore
import TrellisMQTT
import TrellisStorePostgres
import TrellisTestSupport

/// A bridge in a share group: two `trellis run` relays on one PostgreSQL state and one local
/// Mosquitto, bridged to a second Mosquitto by the example's rules. Each message is queued by the
/// relay the local broker gave it to; exactly one relay, the holder of the bridge's lease, forwards
/// the shared queue and receives, under the group's name; when it is killed, the other takes over.
@Suite("Bridge: a share group takes turns on the link", .enabled(if: PostgresTestServer.isRequired))
struct BridgeShareGroupTests {
    static let total = 600

    /// The one of two `relays` whose output says it forwards, once it does and the other stands by
    /// (each direction has its lease, so the other may receive).
    static func forwarder(of relays: [TrellisBinary]) async throws -> Int {
        var holder: Int?
        try await eventually("one relay forwards, the other stands by", timeout: .seconds(60)) {
            let forwarding = relays.indices.filter { relays[$0].output.contains("forwarding to the upstream broker") }
            holder = forwarding.first
            return forwarding.count == 1 && relays[1 - forwarding[0]].output.contains("standing by")
        }
        return try #require(holder)
    }

    @Test(
        "600 messages through two relays, the forwarding one SIGKILLed midway: each arrives upstream under one id; commands come in once",
        .timeLimit(.minutes(5)))
    func killTheForwarder() async throws {
        try await withTestBroker { local in
            try await withTestBroker { upstream in
                try await PostgresTestServer.withDatabase { url in
                    let file = temporaryDirectory() + "/trellis.yaml"
                    try BridgeCommandTests.exampleBridges(url: "mqtt://\(upstream.address)").write(
                        toFile: file, atomically: true, encoding: .utf8)
                    let ports = try (0..<2).map { _ in try #require(PortProbe.freeLoopbackPort()) }
                    var relays = try ["r1", "r2"].enumerated().map { index, id in
                        try ScaleOutTests.startRelay(
                            id, broker: local, store: url, extra: ["--config", file, "--metrics", "\(ports[index])"])
                    }
                    for relay in relays { try await relay.waitForOutput("connected to the broker") }
                    let holder = try await Self.forwarder(of: relays)
                    // Each relay says on /metrics whether it holds the link or stands by.
                    let link = #"{bridge="cloud",direction="out"}"#
                    try await eventually("the holder's link connected, the other's standing by") {
                        let held = try await MetricsTests.get("http://127.0.0.1:\(ports[holder])/metrics").1
                        let standing = try await MetricsTests.get("http://127.0.0.1:\(ports[1 - holder])/metrics").1
                        return held.contains("trellis_bridge_link_connected\(link) 1")
                            && held.contains("trellis_bridge_link_standby\(link) 0")
                            && standing.contains("trellis_bridge_link_standby\(link) 1")
                            && standing.contains("trellis_bridge_link_connected\(link) 0")
                    }

                    let reader = try await TestClients.connect(to: upstream, id: "upstream-reader") {
                        $0.cleanStart = false
                        $0.sessionExpiry = 3600
                    }
                    let inbox = try await MessageCollector.collecting(reader, subscribedTo: ["site/home1/sensors/#"])
                    let device = try await TestClients.connect(to: local, id: "device")
                    let commands = try await MessageCollector.collecting(device, subscribedTo: ["commands/#"])

                    // Commands from upstream: the receiver is one relay's, so each arrives once.
                    let cloud = try await TestClients.connect(to: upstream, id: "cloud")
                    try await eventually("the receiver subscribed upstream") {
                        try await cloud.publishAndWait(topic: "site/home1/commands/probe", payload: [])
                        return await !commands.received(on: "commands/probe").isEmpty
                    }
                    for index in 0..<20 {
                        try await cloud.publishAndWait(
                            topic: "site/home1/commands/lamp", payload: Array(String(index).utf8))
                    }
                    try await commands.messages(on: "commands/lamp", count: 20)

                    for index in 0..<Self.total {
                        try await device.publishAndWait(
                            topic: "sensors/s\(index % 4)", payload: Array(String(index).utf8))
                        if index == Self.total / 3 {
                            relays[holder].process.signal(SIGKILL)
                            _ = try await relays[holder].waitForExit()
                        }
                    }
                    let other = relays[1 - holder]
                    try await other.waitForOutput("forwarding to the upstream broker", timeout: .seconds(60))
                    // What the local broker had given the killed relay and it had not acknowledged
                    // waits in its session: it comes back (and stands by for the link) to take it.
                    relays[holder] = try ScaleOutTests.startRelay(
                        "r\(holder + 1)", broker: local, store: url, extra: ["--config", file])
                    try await inbox.wait(timeout: .seconds(120), "every message upstream") { messages in
                        Set(messages.compactMap { $0.text.flatMap(Int.init) }).count == Self.total
                    }
                    // One id per message whichever relay sent it: the group's, so a reader keeping
                    // the first of each id has each message once.
                    let received = await inbox.messages
                    var idOf: [String: Set<String>] = [:]
                    for message in received {
                        let id = message.properties.userProperties.first { $0.name == BridgeMessageID.property }
                        idOf[message.text ?? "", default: []].insert(id?.value ?? "none")
                    }
                    #expect(idOf.values.allSatisfy { $0.count == 1 }, "\(idOf.filter { $0.value.count > 1 })")
                    // The group's name, the bridge and the one state they share.
                    let origins = Set(idOf.values.compactMap { $0.first.flatMap(BridgeMessageID.init(text:))?.origin })
                    #expect(origins.count == 1 && origins.first?.hasPrefix("g:cloud@") == true, "\(origins)")
                    // Sent again: at most what was in flight or not yet deleted, two windows of 64.
                    #expect(received.count <= Self.total + 128, "resent \(received.count - Self.total)")
                    #expect(await commands.received(on: "commands/lamp").count == 20, "a command carried twice")
                    // The queue emptied by the relay that took over, its oldest message's age back to 0, and
                    // nothing it sent left unacknowledged.
                    try await eventually("the queue empty on the forwarding relay's /metrics", timeout: .seconds(30)) {
                        let metrics = try await MetricsTests.get("http://127.0.0.1:\(ports[1 - holder])/metrics").1
                        return metrics.contains(#"trellis_bridge_queued_messages{bridge="cloud"} 0"#)
                            && metrics.contains(#"trellis_bridge_unacknowledged_messages{bridge="cloud"} 0"#)
                            && metrics.contains(#"trellis_bridge_queue_oldest_age_seconds{bridge="cloud"} 0"#)
                            // And by the rule that kept them, the example's one out rule.
                            && metrics.split(separator: "\n").contains { line in
                                line.hasPrefix("trellis_bridge_rule_queued_messages{") && line.hasSuffix(" 0.0")
                                    && line.contains(#"rule="sensors/#""#) && line.contains(#"bridge="cloud""#)
                            }
                    }
                    try await relays[holder].waitForOutput("holds the bridge's link; standing by")
                    try await ScaleOutTests.stop(relays)
                    await reader.shutdown()
                    await device.shutdown()
                    await cloud.shutdown()
                }
            }
        }
    }
}
