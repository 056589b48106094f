import Foundation
import Testing
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// The secure profile with a real Mosquitto: accounts made with `trellis users add`, the ACL it
/// writes, and the relay logged in as `trellis`. The tests share one such deployment, set up once for
/// the suite (``SecureDeployment``); each logs its own clients in and out.
@Suite("Secure profile", .serialized, .sharedScope(SecureDeployment.with))
struct SecureProfileTests {
    /// Runs `body` with the suite's relay and a login per account (the client id is the account's
    /// name); logs every client out afterwards, so the next test can log in under the same names.
    func withSecureRelay(_ body: (RelayHarness, (String) async throws -> MQTTClient) async throws -> Void) async throws
    {
        let relay = try #require(SecureDeployment.relay, "the suite's deployment is set up")
        try await withTearDown(of: relay, { await $0.shutdownClients() }) { relay in
            try await body(relay) { name in
                try await relay.connect(id: name) {
                    $0.username = name; $0.password = "pw-\(name)"
                }
            }
        }
    }

    static func request(_ id: Int, sender: String, payload: String = "", operation: String = "REQ_numPlants") -> [UInt8]
    {
        Array("ID:\(id);sender:\(sender);receiver:Host-RPI3B+;payload:\(payload);operation:\(operation)".utf8)
    }

    @Test("anonymous clients and wrong passwords cannot connect")
    func noAnonymous() async throws {
        try await withSecureRelay { relay, _ in
            for login in [(String?.none, String?.none), ("alice", "wrong")] {
                let client = try MQTTClient(
                    configuration: MQTTConfiguration(
                        host: relay.broker.host, port: relay.broker.port, clientID: "intruder",
                        username: login.0, password: login.1, reconnectDelay: 0.2...0.2))
                client.start()
                await #expect(throws: MQTTError.self) { try await client.waitUntilConnected(timeout: .seconds(2)) }
                await client.shutdown()
            }
        }
    }

    @Test("a user cannot read another's replies, nor send as another")
    func isolation() async throws {
        try await withSecureRelay { _, login in
            let alice = try await login("alice")
            let bob = try await login("bob")
            let ops = try await login("ops")
            let aliceInbox = await MessageCollector.collecting(alice)
            let bobInbox = await MessageCollector.collecting(bob)
            let opsInbox = await MessageCollector.collecting(ops)
            try? await alice.subscribe("rpi/fromrpi/bob")
            try await alice.subscribe("rpi/fromrpi/alice")
            try await bob.subscribe("rpi/fromrpi/bob")
            try await ops.subscribe("trellis/deadletter")

            try await bob.publishAndWait(topic: "rpi/torpi/bob", payload: Self.request(1, sender: "bob"))
            try await bobInbox.messages(on: "rpi/fromrpi/bob")
            // Sending on bob's topic is refused by the broker; claiming bob on her own topic by Trellis.
            try? await alice.publishAndWait(topic: "rpi/torpi/bob", payload: Self.request(2, sender: "bob"))
            try await alice.publishAndWait(topic: "rpi/torpi/alice", payload: Self.request(3, sender: "bob"))
            let rejected = try await opsInbox.messages(on: "trellis/deadletter")
            #expect(rejected[0].text?.contains(#""reason":"sender_mismatch""#) == true)
            try await alice.publishAndWait(topic: "rpi/torpi/alice", payload: Self.request(4, sender: "alice"))
            let own = try await aliceInbox.messages(on: "rpi/fromrpi/alice")
            #expect(own[0].text?.hasPrefix("ID:4;") == true)

            try await bob.publishAndWait(topic: "rpi/torpi/bob", payload: Self.request(5, sender: "bob"))
            let bobs = try await bobInbox.messages(on: "rpi/fromrpi/bob", count: 2)
            #expect(bobs.map { $0.text?.prefix(5) } == ["ID:1;", "ID:5;"])
            try await alice.publishAndWait(topic: "rpi/torpi/alice", payload: Self.request(6, sender: "alice"))
            try await aliceInbox.messages(on: "rpi/fromrpi/alice", count: 2)
            #expect(await aliceInbox.received(on: "rpi/fromrpi/bob").isEmpty)
        }
    }

    @Test("only a button's own account can press it")
    func buttons() async throws {
        try await withSecureRelay { _, login in
            let alice = try await login("alice")
            let door = try await login("door")
            let inbox = await MessageCollector.collecting(alice)
            try await alice.subscribe("p2o/buttons/+/state")
            try? await alice.publishAndWait(topic: "p2o/buttons/door/press", payload: [])
            try await door.publishAndWait(topic: "p2o/buttons/door/press", payload: [])
            let states = try await inbox.messages(on: "p2o/buttons/door/state")
            #expect(states[0].text?.contains(#""total":1"#) == true)
            try? await door.publishAndWait(topic: "p2o/buttons/window/press", payload: [])
            try await door.publishAndWait(topic: "p2o/buttons/door/press", payload: [])
            let after = try await inbox.messages(on: "p2o/buttons/door/state", count: 2)
            #expect(after[1].text?.contains(#""total":2"#) == true)
            #expect(await inbox.received(on: "p2o/buttons/window/state").isEmpty)
        }
    }

    @Test("a v5 Response Topic is honoured only inside the requester's own reply topics")
    func responseTopics() async throws {
        try await withSecureRelay { _, login in
            let alice = try await login("alice")
            let bob = try await login("bob")
            let inbox = await MessageCollector.collecting(alice)
            let bobInbox = await MessageCollector.collecting(bob)
            try await alice.subscribe("rpi/fromrpi/alice/#")
            try await alice.subscribe("rpi/fromrpi/alice")
            try await bob.subscribe("rpi/fromrpi/bob")
            let outside = MQTTProperties(responseTopic: "rpi/fromrpi/bob", correlationData: [1])
            try await alice.publishAndWait(
                topic: "rpi/torpi/alice", payload: Self.request(1, sender: "alice"), properties: outside)
            let inside = MQTTProperties(responseTopic: "rpi/fromrpi/alice/rr", correlationData: [2])
            try await alice.publishAndWait(
                topic: "rpi/torpi/alice", payload: Self.request(2, sender: "alice"), properties: inside)
            let rr = try await inbox.messages(on: "rpi/fromrpi/alice/rr")
            #expect(rr[0].properties.correlationData == [2])
            // Bob's own reply comes after anything Trellis could have sent him before.
            try await bob.publishAndWait(topic: "rpi/torpi/bob", payload: Self.request(3, sender: "bob"))
            let bobs = try await bobInbox.messages(on: "rpi/fromrpi/bob")
            #expect(bobs.count == 1 && bobs[0].text?.hasPrefix("ID:3;") == true)
            #expect(await bobInbox.received(on: "rpi/fromrpi/bob").count == 1)
        }
    }

    @Test(
        "JSON services: own per-client topics only, the shared form for operators, fleet changes for operators, devices under their own name"
    )
    func jsonServices() async throws {
        try await withSecureRelay { _, login in
            let alice = try await login("alice")
            let bob = try await login("bob")
            let ops = try await login("ops")
            let node1 = try await login("node1")
            let aliceInbox = await MessageCollector.collecting(alice)
            let bobInbox = await MessageCollector.collecting(bob)
            let opsInbox = await MessageCollector.collecting(ops)
            try await alice.subscribe("trellis/clients/alice/response/#")
            try? await alice.subscribe("trellis/clients/bob/response/#")
            try? await alice.subscribe("trellis/response/#")
            try await bob.subscribe("trellis/clients/bob/response/#")
            try await ops.subscribe("trellis/response/#")
            try await ops.subscribe("trellis/clients/ops/response/#")

            // A device account publishes under its own name only.
            try await node1.publishAndWait(topic: "devices/node1/status", payload: Array("online".utf8), retain: true)
            try? await node1.publishAndWait(topic: "devices/node2/status", payload: Array("online".utf8), retain: true)

            // Alice may not ask on Bob's topics nor on the operator's shared form.
            try? await alice.publishAndWait(topic: "trellis/clients/bob/request/devices/list", payload: [])
            try? await alice.publishAndWait(topic: "trellis/request/devices/list", payload: [])
            try await alice.publishAndWait(
                topic: "trellis/clients/alice/request/models/create", payload: Array(#"{"name":"x"}"#.utf8))
            let refused = try await aliceInbox.messages(on: "trellis/clients/alice/response/models/create")
            #expect(refused[0].text?.contains(#""code":"forbidden""#) == true)

            try await ops.publishAndWait(
                topic: "trellis/clients/ops/request/models/create", payload: Array(#"{"name":"x"}"#.utf8))
            let created = try await opsInbox.messages(on: "trellis/clients/ops/response/models/create")
            #expect(created[0].text?.contains(#""status":"ok""#) == true)
            try await ops.publishAndWait(topic: "trellis/request/devices/list", payload: [])
            let listed = try await opsInbox.messages(on: "trellis/response/devices/list")
            #expect(listed[0].text?.contains(#""id":"node1""#) == true)
            #expect(listed[0].text?.contains("node2") == false)

            try await bob.publishAndWait(topic: "trellis/clients/bob/request/devices/list", payload: [])
            let bobs = try await bobInbox.messages(on: "trellis/clients/bob/response/devices/list")
            #expect(bobs.count == 1)
            try await alice.publishAndWait(topic: "trellis/clients/alice/request/devices/list", payload: [])
            try await aliceInbox.messages(on: "trellis/clients/alice/response/devices/list")
            #expect(await aliceInbox.received(on: "trellis/clients/bob/response/devices/list").isEmpty)
            #expect(await aliceInbox.received(on: "trellis/response/devices/list").isEmpty)
            #expect(await opsInbox.received(on: "trellis/response/devices/list").count == 1)
        }
    }

    @Test("a sensor node publishes only its own sensors' readings; a device cannot write its info or command")
    func sensorsAndDevices() async throws {
        try await withSecureRelay { relay, login in
            let pi1 = try await login("pi1")
            let alice = try await login("alice")
            let node3 = try await login("node3")
            let reading = Array(#"{"moisture":5,"temperature":70}"#.utf8)
            let store = try relay.store
            // Refused by the broker (MQTT v5 answers "not authorized"); handled in order before what follows.
            try? await alice.publishAndWait(topic: "rpi/sensors/0x36", payload: reading)
            try? await pi1.publishAndWait(topic: "rpi/sensors/0x40", payload: reading)
            try? await pi1.publishAndWait(topic: "rpi/torpi/pi1x", payload: reading)
            try await pi1.publishAndWait(topic: "rpi/sensors/0x36", payload: reading)
            try await pi1.publishAndWait(topic: "rpi/sensors/0x37", payload: reading)
            let deadline = ContinuousClock.now + .seconds(30)
            while try await store.counts().sensorReadings < 2 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(try await store.counts().sensorReadings == 2, "only pi1's own two sensors reach Trellis")
            let letters = try await store.deadLetters(limit: 1000)
            #expect(
                !letters.contains { $0.topic.hasPrefix("rpi/sensors/") || $0.topic == "rpi/torpi/pi1x" },
                "nor does any refused one, to be dead-lettered")

            let inbox = await MessageCollector.collecting(node3)
            try await node3.subscribe("devices/node3/info")
            try await node3.subscribe("devices/node3/command")
            try? await node3.publishAndWait(
                topic: "devices/node3/info", payload: Array(#"{"forged":true}"#.utf8), retain: true)
            try? await node3.publishAndWait(topic: "devices/node3/command", payload: Array(#"{"op":"forged"}"#.utf8))
            try await node3.publishAndWait(topic: "devices/node3/status", payload: Array("online".utf8), retain: true)
            let info = try await inbox.messages(on: "devices/node3/info")
            #expect(info[0].text?.contains(#""id":"node3""#) == true, "Trellis's own record reaches the device")
            #expect(await inbox.received(on: "devices/node3/info").allSatisfy { $0.text?.contains("forged") == false })
            #expect(await inbox.received(on: "devices/node3/command").isEmpty)
        }
    }
}

/// The secured broker and the relay that ``SecureProfileTests`` share: the accounts, made with `trellis
/// users add`, a broker that takes no one without one, and the relay logged in as `trellis`.
enum SecureDeployment {
    static let accounts: [(name: String, flags: [String])] = [
        ("trellis", ["--trellis"]), ("alice", []), ("bob", []), ("door", ["--button"]), ("ops", ["--operator"]),
        ("node1", ["--device"]), ("node3", ["--device"]), ("pi1", ["--sensor", "0x36", "0X37"])
    ]

    /// The suite's relay, while its tests run.
    @TaskLocal static var relay: RelayHarness?

    /// Runs `tests` with a secured broker and the relay logged in, made for the suite.
    @Sendable static func with(_ tests: @Sendable () async throws -> Void) async throws {
        let directory = temporaryDirectory()
        for account in accounts {
            let result = try await TrellisBinary.run(
                [
                    "users", "add", account.name, "--password", "pw-\(account.name)",
                    "--password-file", directory + "/passwd", "--acl-file", directory + "/acl",
                    "--trellis-password-file", directory + "/trellis.password"
                ] + account.flags)
            #expect(result.status == 0, "users add \(account.name): \(result.output)")
        }
        let listed = try await TrellisBinary.run(["users", "list", "--acl-file", directory + "/acl"])
        #expect(listed.output.contains("door\tbutton"))
        #expect(listed.output.contains("pi1\tsensor 0x36 0x37"))

        try await withTestBroker(
            anonymous: false,
            extraConfig: [
                "password_file \(directory)/passwd", "acl_file \(directory)/acl", "use_username_as_clientid true"
            ]
        ) { broker in
            var settings = RelaySettings()
            settings.operators = ["ops"]
            try await withRelayLoggedIn(broker: broker, settings: settings, watcher: "alice") { relay in
                try await $relay.withValue(relay, operation: tests)
            }
        }
    }
}
