import Foundation
import Synchronization
import Testing
import TrellisBroker
import TrellisCore
import TrellisMQTT
import TrellisTestSupport

/// Attacks on the default deployment, as `make run` starts it: `trellis run` with the shipped
/// broker.conf, which lets clients without an account in. Each attack runs against the real relay
/// and the real broker, and each checks that it fails and that nothing else breaks. The attacks (here and
/// in ClientIDTakeoverTests.swift) share one such deployment (``DefaultDeployment``), one after another,
/// as attackers would; `trellis run` must still be running after each, and exit cleanly at the end.
@Suite("Attacks on the default LAN profile", .serialized, .sharedScope(DefaultDeployment.with))
struct LANProfileAttackTests {
    /// Runs `body` with the suite's `trellis run` and the local operator logged in.
    func withDefaultProfile(_ body: (_ port: Int, _ state: String, _ operator: MQTTClient) async throws -> Void)
        async throws
    {
        try await withDefaultProfile { port, state, operatorClient, _ in try await body(port, state, operatorClient) }
    }

    /// As above, with the running `trellis` too (its output).
    func withDefaultProfile(
        _ body: (_ port: Int, _ state: String, _ operator: MQTTClient, _ trellis: TrellisBinary) async throws -> Void
    ) async throws {
        let running = try #require(DefaultDeployment.running, "the suite's deployment is running")
        let state = running.directory + "/state"
        let password = try String(contentsOfFile: state + "/operator.password", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            try FileManager.default.attributesOfItem(atPath: state + "/operator.password")[.posixPermissions]
                as? Int == 0o600)
        let clients = DefaultDeployment.Clients()
        try await withTearDown(of: clients, { await $0.shutdown() }) { clients in
            try await DefaultDeployment.$clients.withValue(clients) {
                let operatorClient = try await Self.connect(
                    port: running.port, username: "operator", password: password)
                try await body(running.port, state, operatorClient, running.trellis)
            }
        }
        #expect(running.trellis.process.isRunning, "trellis run outlived the attack: \(running.trellis.output)")
    }

    static func connect(port: Int, username: String? = nil, password: String? = nil) async throws -> MQTTClient {
        let client = try MQTTClient(
            configuration: MQTTConfiguration(
                host: "127.0.0.1", port: port, clientID: username ?? "anon-\(UUID().uuidString.prefix(8))",
                username: username, password: password, reconnectDelay: 0.2...0.5))
        DefaultDeployment.clients?.add(client)
        client.start()
        try await client.waitUntilConnected(timeout: .seconds(20))
        return client
    }

    /// An operator's request on the shared JSON topics, answered.
    static func ask(_ client: MQTTClient, _ inbox: MessageCollector, _ path: String, _ body: String) async throws
        -> String
    {
        let before = await inbox.received(on: "trellis/response/\(path)").count
        try await client.publishAndWait(topic: "trellis/request/\(path)", payload: Array(body.utf8))
        let answers = try await inbox.messages(on: "trellis/response/\(path)", count: before + 1, timeout: .seconds(20))
        return answers.last?.text ?? ""
    }

    @Test(
        "an anonymous client calls every operator action, reads `#` and publishes as a device, a button and a sensor: nothing happens"
    )
    func anonymousOperator() async throws {
        try await withDefaultProfile { port, state, operatorClient in
            let watch = await MessageCollector.collecting(operatorClient)
            try await operatorClient.subscribe("#")
            try await operatorClient.publishAndWait(topic: "devices/node7/status", payload: Array("online".utf8))
            try await watch.messages(on: "devices/node7/info", timeout: .seconds(20))
            #expect(
                try await Self.ask(operatorClient, watch, "devices/get", #"{"id":"node7"}"#).contains(#""status":"ok""#)
            )

            let anonymous = try await Self.connect(port: port)
            let inbox = await MessageCollector.collecting(anonymous)
            try? await anonymous.subscribe("#")
            try await anonymous.subscribe("rpi/fromrpi")
            let paths =
                FleetRequest.actions.all.map(\.path) + CatalogRequest.actions.all.map(\.path) + [
                    "deadletters/list", "store/backup"
                ]
            for path in paths {
                for topic in ["trellis/request/\(path)", "trellis/clients/anon/request/\(path)"] {
                    try? await anonymous.publishAndWait(
                        topic: topic, payload: Array(#"{"id":"node7","model":"m1"}"#.utf8))
                }
            }
            for (topic, payload) in [
                ("devices/node7/command", "reboot"), ("devices/node7/status", "offline"),
                ("p2o/buttons/door/press", "2026-11-22T10:41:05.123Z"),
                ("rpi/sensors/0x36", #"{"moisture": 1}"#), ("homeassistant/status", "online")
            ] {
                try? await anonymous.publishAndWait(topic: topic, payload: Array(payload.utf8))
            }
            // The released app's one request still works, and its answer comes after all of the above.
            try await anonymous.publishAndWait(
                topic: "rpi/torpi",
                payload: Array("ID:1;sender:operator-attack;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants".utf8)
            )
            try await inbox.messages(on: "rpi/fromrpi", timeout: .seconds(20))
            #expect(
                try await Self.ask(operatorClient, watch, "devices/get", #"{"id":"node7"}"#).contains(
                    #""powerstate":"online""#),
                "node7 is neither deleted nor marked offline")

            let seen = await watch.all()
            #expect(
                seen.filter { $0.topic.hasPrefix("trellis/response/") && $0.topic != "trellis/response/devices/get" }
                    .isEmpty)
            #expect(!seen.contains { $0.topic.hasPrefix("trellis/clients/anon/") || $0.topic == "trellis/deadletter" })
            #expect(!seen.contains { $0.topic.hasPrefix("p2o/buttons/door/") || $0.topic.hasPrefix("rpi/sensors/") })
            #expect(
                Set(await inbox.all().map(\.topic)) == ["rpi/fromrpi"], "an anonymous client reads its replies alone")
            let files = FileManager.default.enumerator(atPath: state)?.compactMap { $0 as? String } ?? []
            #expect(!files.contains { $0.contains("trellis-requested") }, "no backup was taken")
            await anonymous.shutdown()
        }
    }

    @Test("a Response Topic pointed at another client's space is answered on rpi/fromrpi alone and dead-lettered")
    func foreignResponseTopic() async throws {
        try await withDefaultProfile { port, _, operatorClient in
            let watch = await MessageCollector.collecting(operatorClient)
            try await operatorClient.subscribe("#")
            let anonymous = try await Self.connect(port: port)
            for target in ["p2o/clients/operator/button-press", "devices/node7/command", "rpi/fromrpi/operator"] {
                try await anonymous.publishAndWait(
                    topic: "rpi/torpi",
                    payload: Array(
                        "ID:2;sender:response-attack;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants".utf8),
                    properties: MQTTProperties(responseTopic: target, correlationData: [7]))
            }
            try await watch.wait(timeout: .seconds(20), "three refusals") { messages in
                messages.filter {
                    $0.topic == "trellis/deadletter" && ($0.text ?? "").contains("response_topic_refused")
                }.count == 3
            }
            #expect(await watch.received(on: "rpi/fromrpi").count == 3)
            let seen = Set(await watch.all().map(\.topic))
            #expect(
                seen.isDisjoint(with: [
                    "p2o/clients/operator/button-press", "devices/node7/command", "rpi/fromrpi/operator"
                ]))
            await anonymous.shutdown()
        }
    }
}

/// The deployment ``LANProfileAttackTests`` share: `trellis run` owning its broker on a free port,
/// with the shipped broker.conf, in a directory of its own; it must exit cleanly at the end.
enum DefaultDeployment {
    struct Running: Sendable {
        let trellis: TrellisBinary
        let port: Int
        let directory: String
    }

    /// The suite's deployment, while its tests run.
    @TaskLocal static var running: Running?

    /// The clients a test connected, shut down when it ends, passed or failed, so that none of them (an
    /// attacker reconnecting under an id, say) outlives it into the next test.
    @TaskLocal static var clients: Clients?

    final class Clients: Sendable {
        private let list = Mutex<[MQTTClient]>([])

        func add(_ client: MQTTClient) { list.withLock { $0.append(client) } }

        func shutdown() async {
            for client in list.withLock({ $0 }) { await client.shutdown() }
        }
    }

    /// Runs `tests` with the deployment started for the suite, and stops it afterwards.
    @Sendable static func with(_ tests: @Sendable () async throws -> Void) async throws {
        let directory = temporaryDirectory()
        let (trellis, _, port) = try await TrellisBinary.startOwningBroker(in: directory)
        var failure: (any Error)?
        do {
            try await $running.withValue(Running(trellis: trellis, port: port, directory: directory), operation: tests)
        } catch {
            failure = error
        }
        #expect(try await trellis.terminate() == 0)
        if let failure { throw failure }
    }
}
