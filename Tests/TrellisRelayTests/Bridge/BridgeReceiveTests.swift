import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStoreSQLite
import TrellisTestSupport

/// The bridge's `in` rules between two real Mosquittos: what the upstream broker has for the
/// household arrives on the local broker under its local topic, in order, and what comes in does not
/// go back out.
@Suite("Bridge: carried in from the upstream broker", .serialized, .timeLimit(.minutes(3)))
struct BridgeReceiveTests {
    static func settings(upstream: TestBroker) -> RelaySettings {
        var settings = RelaySettings()
        settings.bridges = [
            BridgeSettings(
                name: "cloud", host: upstream.host, port: upstream.port,
                rules: [
                    BridgeRule(direction: .in, filter: "site/home1/commands/#", prefix: "site/home1/"),
                    // Overlaps what comes in: a command carried in must not be sent back up.
                    BridgeRule(direction: .out, filter: "commands/#", prefix: "site/home1/echo/")
                ])
        ]
        return settings
    }

    /// Publishes `payload` upstream on `site/home1/commands/lamp` with the bridge id `id`.
    static func send(_ payload: String, id: String, by cloud: MQTTClient) async throws {
        try await cloud.publishAndWait(
            topic: "site/home1/commands/lamp", payload: Array(payload.utf8),
            properties: MQTTProperties(userProperties: [UserProperty(BridgeMessageID.property, id)]))
    }

    /// A relay bridged to a fresh upstream broker by ``settings(upstream:)``, a local client
    /// collecting `commands/#`, and a client of the upstream broker once the relay's receiver is
    /// subscribed there (it subscribes as it starts: a command before that would find no one). The
    /// local broker's configuration gets `localBrokerConfig`'s lines.
    static func withReceiver(
        localBrokerConfig: [String] = [],
        _ body: (RelayHarness, TestBroker, MQTTClient, MessageCollector, MQTTClient) async throws -> Void
    ) async throws {
        try await withTestBroker { upstream in
            try await withRelay(settings: Self.settings(upstream: upstream), brokerConfig: localBrokerConfig) { relay in
                let local = try await relay.connect()
                let commands = try await MessageCollector.collecting(local, subscribedTo: ["commands/#"])
                let cloud = try await TestClients.connect(to: upstream)
                try await eventually("the relay's receiver is subscribed upstream") {
                    try await cloud.publishAndWait(topic: "site/home1/commands/probe", payload: [])
                    return await !commands.received(on: "commands/probe").isEmpty
                }
                try await body(relay, upstream, local, commands, cloud)
                await cloud.shutdown()
            }
        }
    }

    @Test(
        "500 QoS 1 commands published upstream arrive locally without the prefix, in order, and none goes back up")
    func carriedIn() async throws {
        try await Self.withReceiver { relay, upstream, local, commands, cloud in
            let watcher = try await TestClients.connect(to: upstream)
            let echoes = try await MessageCollector.collecting(watcher, subscribedTo: ["site/home1/echo/#"])
            for index in 0..<500 {
                try await cloud.publishAndWait(
                    topic: "site/home1/commands/lamp", payload: Array(String(index).utf8))
            }
            try await commands.wait(timeout: .seconds(60), "every command locally") {
                $0.filter { $0.topic == "commands/lamp" }.count >= 500
            }
            let numbers = await commands.received(on: "commands/lamp").compactMap { $0.text.flatMap(Int.init) }
            #expect(numbers == Array(0..<500))
            // Anything sent back up would be in the queue or upstream by now: the relay publishes
            // what it carries in through its own connection, whose subscriptions are No Local.
            try await relay.store.flush()
            #expect(try await relay.store.forwardBacklog(bridge: "cloud").messages == 0)
            // A command published locally by someone else does go up by the out rule.
            try await local.publishAndWait(topic: "commands/local", payload: Array("mine".utf8))
            _ = try await echoes.messages(on: "site/home1/echo/commands/local")
            #expect(await echoes.all().map(\.topic) == ["site/home1/echo/commands/local"])
            await watcher.shutdown()
        }
    }

    @Test(
        "a copy of a message (its trellis-id carried lately) and one this relay's own bridge sent are dropped; the id goes with what is carried"
    )
    func copiesAndLoops() async throws {
        try await Self.withReceiver { relay, _, _, commands, cloud in
            func send(_ payload: String, id: String) async throws { try await Self.send(payload, id: id, by: cloud) }
            try await send("on", id: "office:cloud/1")
            try await send("on again", id: "office:cloud/1")
            try await send("mine", id: "\(relay.clientID):cloud/7")
            try await send("off", id: "office:cloud/2")
            try await commands.wait(timeout: .seconds(30), "the last command") {
                $0.contains { $0.text == "off" }
            }
            let lamp = await commands.received(on: "commands/lamp")
            #expect(lamp.map(\.text) == ["on", "off"])
            #expect(
                lamp.map { $0.properties.userProperties.first { $0.name == BridgeMessageID.property }?.value }
                    == ["office:cloud/1", "office:cloud/2"])
        }
    }

    @Test(
        "a command too large for the local broker is dropped, and those behind it still arrive: the receiver does not retry it for good"
    )
    func refusedLocallyIsDropped() async throws {
        // The local broker takes packets up to 2 KiB (it says so in its CONNACK); the upstream one, any.
        try await Self.withReceiver(localBrokerConfig: ["max_packet_size 2048"]) { _, _, _, commands, cloud in
            let large = String(repeating: "x", count: 4096)
            try await cloud.publishAndWait(topic: "site/home1/commands/lamp", payload: Array(large.utf8))
            for index in 0..<3 {
                try await cloud.publishAndWait(topic: "site/home1/commands/lamp", payload: Array("\(index)".utf8))
            }
            // In order, so once the last small one is here the large one was passed over.
            let arrived = try await commands.messages(on: "commands/lamp", count: 3, timeout: .seconds(30))
            #expect(arrived.compactMap(\.text) == ["0", "1", "2"])
        }
    }

    @Test("a copy that comes after a restart of Trellis is dropped still: the ids carried in are kept in the store")
    func copiesAcrossRestart() async throws {
        try await Self.withReceiver { relay, _, _, commands, cloud in
            try await Self.send("on", id: "office:cloud/1", by: cloud)
            try await commands.wait(timeout: .seconds(30), "the first command") { $0.contains { $0.text == "on" } }
            try await Self.restart(relay, commands: commands, cloud: cloud)
            let lamp = await commands.received(on: "commands/lamp").map(\.text)
            #expect(lamp == ["on", "off"], "\(lamp)")
        }
    }

    @Test(
        "on a state whose table of ids is gone, the receiver carries what comes (a copy passes once) and the relay's writes go on"
    )
    func unreadableIDs() async throws {
        try await Self.withReceiver { relay, upstream, local, commands, cloud in
            try await Self.send("on", id: "office:cloud/1", by: cloud)
            try await commands.wait(timeout: .seconds(30), "the first command") { $0.contains { $0.text == "on" } }
            try await Self.restart(relay, commands: commands, cloud: cloud) {
                // A damaged state: the table of the ids carried in is gone, so they can be neither read
                // as the receiver starts nor recorded.
                _ = try await ToolProcess.run([
                    "/usr/bin/env", "python3", "-c",
                    "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute('DROP TABLE bridge_carried'); db.commit()",
                    relay.stateDirectory + "/" + SQLiteStore.fileName
                ])
            }
            // Nothing is remembered, so the copy passes (at least once), and the next goes on.
            let lamp = await commands.received(on: "commands/lamp").map(\.text)
            #expect(lamp == ["on", "on again", "off"], "\(lamp)")
            // The failed records did not hold the relay's writes back: a message an out rule takes is
            // kept (in the same write-behind as the records) and goes up.
            let watcher = try await TestClients.connect(to: upstream)
            let echoes = try await MessageCollector.collecting(watcher, subscribedTo: ["site/home1/echo/#"])
            try await local.publishAndWait(topic: "commands/local", payload: Array("mine".utf8))
            _ = try await echoes.messages(on: "site/home1/echo/commands/local")
            try await relay.store.flush()
            await watcher.shutdown()
        }
    }

    /// Stops the relay, runs `between`, starts it again, waits for its receiver upstream, and sends a
    /// copy of the command `office:cloud/1` ("on again") and a new one, `office:cloud/2` ("off"), which
    /// it waits for locally.
    static func restart(
        _ relay: RelayHarness, commands: MessageCollector, cloud: MQTTClient,
        between: () async throws -> Void = {}
    ) async throws {
        try await relay.stopRelay()
        try await between()
        try await relay.startRelay()
        try await eventually("the relay's receiver is subscribed upstream again") {
            try await cloud.publishAndWait(topic: "site/home1/commands/again", payload: [])
            return await !commands.received(on: "commands/again").isEmpty
        }
        try await Self.send("on again", id: "office:cloud/1", by: cloud)
        try await Self.send("off", id: "office:cloud/2", by: cloud)
        try await commands.wait(timeout: .seconds(30), "the last command") { $0.contains { $0.text == "off" } }
    }
}
