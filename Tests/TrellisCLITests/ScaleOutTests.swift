import Foundation
import Testing
import TrellisBroker
import TrellisCore
import TrellisMQTT
import TrellisStore
import TrellisStoreSQLite
import TrellisStorePostgres
import TrellisStorePostgres
import TrellisTestSupport

/// Two `trellis run` relays in one share group on one Mosquitto, sharing a fresh PostgreSQL
/// database: each message reaches one relay, and whichever answers, the state is one. What the
/// broker takes part in is here (presses racing to one retained state, a relay killed mid-burst,
/// presence); the races on the state and the limits alone are `ShareGroupRaceTests`', on engines.
@Suite("Scaling out: two relays, $share and PostgreSQL", .enabled(if: PostgresTestServer.isRequired))
struct ScaleOutTests {
    /// Starts relays with these client ids in share group `g` and waits until each is subscribed.
    static func startRelays(
        _ ids: [String], broker: TestBroker, store: PostgresURL, extra: [String] = [], settings: [String: String] = [:]
    ) async throws -> [TrellisBinary] {
        var relays: [TrellisBinary] = []
        for id in ids {
            relays.append(try startRelay(id, broker: broker, store: store, extra: extra, settings: settings))
        }
        for relay in relays { try await relay.waitForOutput("connected to the broker") }
        return relays
    }

    /// `settings`: `TRELLIS_…` variables beside the store's.
    static func startRelay(
        _ id: String, broker: TestBroker, store: PostgresURL, extra: [String] = [], settings: [String: String] = [:]
    ) throws -> TrellisBinary {
        var environment = ProcessInfo.processInfo.environment.merging(settings) { $1 }
        environment["TRELLIS_STATE_STORE"] = store.urlWithPassword
        return try TrellisBinary.start(
            [
                "run", "--broker", broker.address, "--share", "g", "--client-id", id,
                "--state", temporaryDirectory()
            ] + extra, environment: environment)
    }

    static func stop(_ relays: [TrellisBinary]) async throws {
        for relay in relays where relay.process.isRunning { relay.process.signal(SIGTERM) }
        for relay in relays { _ = try await relay.waitForExit() }
    }

    static func request(_ id: Int, from client: String, _ operation: String, payload: String = "") -> [UInt8] {
        Array("ID:\(id);sender:\(client);receiver:Host-RPI3B+;payload:\(payload);operation:\(operation)".utf8)
    }

    @Test("presses racing on one button through two relays: total, history and the retained state agree with the store")
    func pressRace() async throws {
        try await withTestBroker { broker in
            try await PostgresTestServer.withDatabase { url in
                let relays = try await Self.startRelays(["r1", "r2"], broker: broker, store: url)
                let pressers = [
                    try await TestClients.connect(to: broker, id: "p1"),
                    try await TestClients.connect(to: broker, id: "p2")
                ]
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for presser in pressers {
                        group.addTask {
                            for _ in 0..<299 {
                                try presser.publish(topic: "p2o/buttons/race/press", payload: [], qos: .atLeastOnce)
                            }
                            try await presser.publishAndWait(
                                topic: "p2o/buttons/race/press", payload: [], qos: .atLeastOnce)
                        }
                    }
                    try await group.waitForAll()
                }
                let store = try await PostgresStore.connect(url, owner: "checker")
                try await eventually("600 presses counted", timeout: .seconds(240)) {
                    try await store.button(id: "race")?.total == 600
                }
                let snapshot = try #require(try await store.button(id: "race"))
                #expect(snapshot.history.count == 20)
                // The retained state settles on the store's, whichever relay published last.
                let expected = ButtonPayloads.state(ButtonState(id: "race", total: 600, history: snapshot.history))
                try await eventually("the retained state equals the store's", timeout: .seconds(60)) {
                    try await Self.retained("p2o/buttons/race/state", broker: broker) == expected
                }
                try await store.close()
                try await Self.stop(relays)
                for presser in pressers { await presser.shutdown() }
            }
        }
    }

    /// Mosquitto keeps a shared subscription's member in the round robin while its persistent
    /// session lives: while r1 is down, r2 answers the requests that come its way and r1's share
    /// waits in r1's session until it is back (brokers that prefer online members, EMQX among
    /// them, send everything to r2).
    @Test("a relay killed mid-burst: the other keeps answering; after its restart nothing is lost or counted twice")
    func killOneRelay() async throws {
        try await withTestBroker { broker in
            try await PostgresTestServer.withDatabase { url in
                var relays = try await Self.startRelays(["r1", "r2"], broker: broker, store: url)
                let presser = try await TestClients.connect(to: broker, id: "presser")
                let (asker, answers) = try await TestClients.connectCollecting(
                    to: broker, id: "asker", "rpi/fromrpi/asker")
                for index in 0..<1_000 {
                    try presser.publish(topic: "p2o/buttons/kill/press", payload: [], qos: .atLeastOnce)
                    if index == 350 {
                        relays[0].process.signal(SIGKILL)
                        _ = try await relays[0].waitForExit()
                    }
                }
                try await presser.publishAndWait(topic: "p2o/buttons/kill/press", payload: [], qos: .atLeastOnce)
                // While r1 is down, r2 answers new requests.
                for index in 0..<4 {
                    try await asker.publishAndWait(
                        topic: "rpi/torpi/asker", payload: Self.request(index, from: "asker", "REQ_numPlants"))
                }
                try await answers.wait(timeout: .seconds(240), "r2 answers while r1 is down") { $0.count >= 1 }

                relays[0] = try Self.startRelay("r1", broker: broker, store: url)
                try await relays[0].waitForOutput("connected to the broker")
                try await answers.wait(timeout: .seconds(240), "every request answered once r1 is back") {
                    $0.count >= 4
                }
                let store = try await PostgresStore.connect(url, owner: "checker")
                try await eventually("1,001 presses counted", timeout: .seconds(240)) {
                    try await store.button(id: "kill")?.total == 1_001
                }
                try await Self.stop(relays)
                #expect(try await store.button(id: "kill")?.total == 1_001, "counted twice after the restart")
                try await store.close()
                await presser.shutdown()
                await asker.shutdown()
            }
        }
    }

    @Test("each relay says online on trellis/status/<client id>; Home Assistant's availability lists both, any of them")
    func presence() async throws {
        try await withTestBroker { broker in
            try await PostgresTestServer.withDatabase { url in
                let relays = try await Self.startRelays(["r1", "r2"], broker: broker, store: url)
                #expect(try await Self.retained("trellis/status/r1", broker: broker) == Array("online".utf8))
                #expect(try await Self.retained("trellis/status/r2", broker: broker) == Array("online".utf8))
                try await eventually("discovery lists both relays", timeout: .seconds(20)) {
                    let config = try await Self.retained(
                        "homeassistant/sensor/trellis/messages_handled/config", broker: broker)
                    let text = String(decoding: config ?? [], as: UTF8.self)
                    return text.contains("trellis/status/r1") && text.contains("trellis/status/r2")
                        && text.contains(#""availability_mode":"any""#)
                }
                #expect(try await relays[1].terminate() == 0)
                #expect(try await Self.retained("trellis/status/r2", broker: broker) == Array("offline".utf8))
                try await Self.stop(relays)
            }
        }
    }

    /// The retained message on `topic` now, as a fresh subscriber gets it.
    static func retained(_ topic: String, broker: TestBroker) async throws -> [UInt8]? {
        let (reader, inbox) = try await TestClients.connectCollecting(to: broker, topic)
        let messages = try? await inbox.messages(on: topic, timeout: .seconds(5))
        await reader.shutdown()
        return messages?.first?.payload
    }
}

extension PostgresURL {
    /// The URL with its password, for handing to a relay in its environment.
    var urlWithPassword: String {
        let secret =
            password.map { ":" + ($0.addingPercentEncoding(withAllowedCharacters: .urlPasswordAllowed) ?? $0) } ?? ""
        return "postgres://\(user)\(secret)@\(host):\(port)/\(database)"
    }
}
