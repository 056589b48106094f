import Foundation
import Testing
import TrellisMQTT
import TrellisTestSupport

/// What the tests of the shipped broker profiles (`broker.*.conf` at the repository root) share:
/// reading a profile as shipped, and the check that a password user is served through it, which
/// each of them makes the same way.
enum ShippedProfile {
    /// The text of the shipped profile `name` (`broker.tls.conf`, `broker.dynsec.conf`).
    static func text(_ name: String) throws -> String {
        try String(contentsOf: Repository.root.appendingPathComponent(name), encoding: .utf8)
    }

    /// The password user `alice` (password `pw-alice`) logs in on the loopback listener at `port`,
    /// asks for the number of plants on her own topic (request ID 7) and disconnects; returns the
    /// answers she got on `rpi/fromrpi/alice`.
    static func alicesAnswers(port: Int) async throws -> [MQTTMessage] {
        let alice = try MQTTClient(
            configuration: MQTTConfiguration(
                host: "127.0.0.1", port: port, clientID: "alice",
                username: "alice", password: "pw-alice"))
        alice.start()
        return try await withTearDown(of: alice, { await $0.shutdown() }) { alice in
            try await alice.waitUntilConnected()
            let inbox = try await MessageCollector.collecting(alice, subscribedTo: ["rpi/fromrpi/alice"])
            try await alice.publishAndWait(
                topic: "rpi/torpi/alice",
                payload: Array("ID:7;sender:alice;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants".utf8))
            return try await inbox.messages(on: "rpi/fromrpi/alice")
        }
    }

    /// Alice names Bob's reply topic as her Response Topic, with no flag given to Trellis: the answer
    /// comes on her own reply topic alone, Bob gets nothing; her own space below her reply topic is
    /// honoured. Bob logs in with `pw-bob`.
    static func foreignResponseTopicRefused(port: Int) async throws {
        let bob = try MQTTClient(
            configuration: MQTTConfiguration(
                host: "127.0.0.1", port: port, clientID: "bob",
                username: "bob", password: "pw-bob"))
        let alice = try MQTTClient(
            configuration: MQTTConfiguration(
                host: "127.0.0.1", port: port, clientID: "alice",
                username: "alice", password: "pw-alice"))
        bob.start()
        alice.start()
        do {
            try await alice.waitUntilConnected()
            try await bob.waitUntilConnected()
            let bobs = try await MessageCollector.collecting(bob, subscribedTo: ["rpi/fromrpi/bob"])
            let inbox = try await MessageCollector.collecting(
                alice, subscribedTo: ["rpi/fromrpi/alice", "rpi/fromrpi/alice/#"])
            try await alice.publishAndWait(
                topic: "rpi/torpi/alice",
                payload: Array("ID:8;sender:alice;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants".utf8),
                properties: MQTTProperties(responseTopic: "rpi/fromrpi/bob", correlationData: [8]))
            try await alice.publishAndWait(
                topic: "rpi/torpi/alice",
                payload: Array("ID:9;sender:alice;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants".utf8),
                properties: MQTTProperties(responseTopic: "rpi/fromrpi/alice/rr", correlationData: [9]))
            let direct = try #require(try await inbox.messages(on: "rpi/fromrpi/alice/rr").first)
            #expect(direct.properties.correlationData == [9])
            #expect(await inbox.received(on: "rpi/fromrpi/alice").contains { $0.text?.hasPrefix("ID:8;") == true })
            #expect(await bobs.all().isEmpty, "Bob got what Alice's Response Topic pointed at him")
        } catch {
            await alice.shutdown()
            await bob.shutdown()
            throw error
        }
        await alice.shutdown()
        await bob.shutdown()
    }
}
