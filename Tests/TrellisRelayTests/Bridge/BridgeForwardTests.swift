import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStoreSQLite
import TrellisTestSupport

/// The bridge's store and forward between two real Mosquittos: what the local broker acknowledged
/// reaches the upstream one, across the upstream broker's restart and a restart of Trellis.
@Suite("Bridge: store and forward through real brokers", .serialized)
struct BridgeForwardTests {
    static let total = 2_000

    /// A relay bridged to a fresh upstream broker by one out rule (`sensors/#` under `prefix`), and a
    /// reader of everything under `prefix` upstream whose session the broker has saved, so it
    /// survives the broker's crash.
    static func withBridge(
        prefix: String, _ body: (RelayHarness, TestBroker, MessageCollector) async throws -> Void
    ) async throws {
        try await withTestBroker { upstream in
            var settings = RelaySettings()
            settings.bridges = [
                BridgeSettings(
                    name: "cloud", host: upstream.host, port: upstream.port,
                    rules: [BridgeRule(direction: .out, filter: "sensors/#", prefix: prefix)])
            ]
            try await withRelay(settings: settings) { relay in
                let reader = try await TestClients.connect(to: upstream, id: "upstream-reader") {
                    $0.cleanStart = false
                    $0.sessionExpiry = 3600
                }
                let inbox = try await MessageCollector.collecting(reader, subscribedTo: ["\(prefix)#"])
                try await upstream.waitForPersistence()
                try await body(relay, upstream, inbox)
                await reader.shutdown()
            }
        }
    }

    @Test(
        "2,000 QoS 1 messages, the upstream broker stopped and started again midway: every one arrives upstream, in order per topic",
        .timeLimit(.minutes(3)))
    func upstreamRestart() async throws {
        try await Self.withBridge(prefix: "site/home1/") { relay, upstream, inbox in
            let publisher = try await relay.connect()
            func publish(_ range: Range<Int>) async throws {
                for index in range {
                    try await publisher.publishAndWait(
                        topic: "sensors/s\(index % 4)", payload: Array(String(index).utf8))
                }
            }
            try await publish(0..<(Self.total / 2))
            // Stopped, not killed: a SIGKILLed Mosquitto loses what it acknowledged since its last
            // save (every second here), which no sender can see; that is the upstream broker's
            // durability, not the bridge's.
            await upstream.stopKeepingState()
            try await publish((Self.total / 2)..<Self.total)
            try await upstream.restart()

            try await inbox.wait(timeout: .seconds(120), "every message upstream") { messages in
                Set(messages.compactMap { $0.text.flatMap(Int.init) }).count == Self.total
            }
            let received = await inbox.messages
            for sensor in 0..<4 {
                let numbers = received.filter { $0.topic == "site/home1/sensors/s\(sensor)" }.compactMap {
                    $0.text.flatMap(Int.init)
                }
                var firsts: [Int] = []
                var seen: Set<Int> = []
                for number in numbers where seen.insert(number).inserted { firsts.append(number) }
                #expect(firsts == firsts.sorted(), "sensor s\(sensor) in order")
                #expect(firsts.count == Self.total / 4)
            }
            #expect(received.allSatisfy { $0.topic.hasPrefix("site/home1/sensors/") })
            // Each message carries its id, the same on every copy: a receiver keeping the first of
            // each id has each message once.
            let ids = received.map { message in
                message.properties.userProperties.first { $0.name == BridgeMessageID.property }
                    .flatMap { BridgeMessageID(text: $0.value) }
            }
            let origin = BridgeMessageID.origin(
                relay: relay.clientID, bridge: "cloud", state: try await relay.store.stateIdentity())
            #expect(ids.allSatisfy { $0?.origin == origin })
            var payloadOf: [BridgeMessageID: String] = [:]
            for (id, message) in zip(ids, received) {
                guard let id else { continue }
                #expect(payloadOf[id, default: message.text ?? ""] == message.text, "one id, one message")
                payloadOf[id] = message.text
            }
            #expect(payloadOf.count == Self.total)
            try await Self.emptied(relay)
        }
    }

    @Test(
        "messages kept while the upstream broker is down survive a restart of Trellis and go up once it returns",
        .timeLimit(.minutes(3)))
    func keptAcrossRestart() async throws {
        try await Self.withBridge(prefix: "up/") { relay, upstream, inbox in
            upstream.kill()

            try await Self.publish(0..<500, on: "sensors/t", through: relay)
            // The local broker acknowledged each; the relay keeps each as it handles it.
            try await eventually("the 500 kept while the upstream broker is down", timeout: .seconds(60)) {
                try await relay.store.forwardBacklog(bridge: "cloud").messages == 500
            }
            try await relay.stopRelay()
            try await relay.startRelay()
            try await upstream.restart()
            // Deleted from the queue once acknowledged upstream, where the reader has every one.
            try await Self.emptied(relay, within: .seconds(120))
            try await inbox.wait(timeout: .seconds(120), "every message upstream") { messages in
                Set(messages.compactMap { $0.text.flatMap(Int.init) }) == Set(0..<500)
            }
        }
    }

    @Test(
        "deletes the store refuses keep the acknowledged messages held, not sent again; once it deletes again the queue empties",
        .timeLimit(.minutes(3)))
    func deletesRefused() async throws {
        try await Self.withBridge(prefix: "up/") { relay, _, inbox in
            // The store refuses every delete from the queue (a trigger of the test's own, by another connection).
            try await Self.sql(
                relay,
                "CREATE TRIGGER refuse_delete BEFORE DELETE ON bridge_queue BEGIN SELECT RAISE(ABORT, 'deletes refused'); END"
            )
            let publisher = try await Self.publish(0..<100, on: "sensors/d", through: relay)
            try await inbox.wait(timeout: .seconds(60), "every message upstream") { messages in
                Set(messages.compactMap { $0.text.flatMap(Int.init) }) == Set(0..<100)
            }
            // Acknowledged upstream, and still in the store. One more message goes up only by a read of the
            // queue from its head, which finds the hundred again: held by the window, they are not sent again.
            try await publisher.publishAndWait(topic: "sensors/d", payload: Array("100".utf8))
            try await inbox.wait(timeout: .seconds(60), "the last message upstream") { messages in
                messages.contains { $0.text == "100" }
            }
            #expect(try await relay.store.forwardBacklog(bridge: "cloud").messages == 101)
            try await Self.sql(relay, "DROP TRIGGER refuse_delete")
            try await Self.emptied(relay)
            // Held while the deletes failed, none was read and sent again.
            let received = await inbox.messages.compactMap { $0.text.flatMap(Int.init) }
            #expect(received.sorted() == Array(0...100), "\(received.count) received")
            await publisher.shutdown()
        }
    }

    /// Publishes each number of `numbers` as its own QoS 1 message on `topic`, waiting for the local
    /// broker's acknowledgement of each; returns the publisher.
    @discardableResult
    static func publish(_ numbers: Range<Int>, on topic: String, through relay: RelayHarness) async throws
        -> MQTTClient
    {
        let publisher = try await relay.connect()
        for number in numbers {
            try await publisher.publishAndWait(topic: topic, payload: Array(String(number).utf8))
        }
        return publisher
    }

    /// Waits until the bridge's queue is empty: every message acknowledged upstream and deleted.
    static func emptied(_ relay: RelayHarness, within timeout: Duration = .seconds(30)) async throws {
        try await eventually("the queue is empty", timeout: timeout) {
            try await relay.store.forwardBacklog(bridge: "cloud").messages == 0
        }
    }

    /// Runs `statement` on the relay's SQLite state through a connection of its own (Python's
    /// sqlite3), and returns what it printed.
    @discardableResult
    static func sql(_ relay: RelayHarness, _ statement: String) async throws -> String {
        try await ToolProcess.run([
            "/usr/bin/env", "python3", "-c",
            "import sqlite3, sys; db = sqlite3.connect(sys.argv[1], timeout=30); "
                + "print(db.execute(sys.argv[2]).fetchall()); db.commit()",
            relay.stateDirectory + "/" + SQLiteStore.fileName, statement
        ])
    }
}
