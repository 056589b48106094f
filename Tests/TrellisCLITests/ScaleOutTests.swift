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
/// database: each message reaches one relay, and whichever answers, the state is one.
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

    @Test("30 racing adds through two relays: each answered once, exactly 7 plants; every read sees them")
    func plantLimitRace() async throws {
        try await withTestBroker { broker in
            try await PostgresTestServer.withDatabase { url in
                let relays = try await Self.startRelays(["r1", "r2"], broker: broker, store: url)
                let (phone, seen) = try await TestClients.connectCollecting(to: broker, id: "phones", "rpi/fromrpi/#")
                for index in 0..<30 {
                    try phone.publish(
                        topic: "rpi/torpi/c\(index)",
                        payload: Self.request(
                            index, from: "c\(index)",
                            "REQ_addNewPlant", payload: "P\(index),0x\(index + 10)"), qos: .atLeastOnce)
                }
                try await seen.wait(timeout: .seconds(60), "30 answers") { $0.count >= 30 }
                let answers = await seen.all().compactMap(\.text)
                #expect(answers.count == 30)
                #expect(answers.filter { $0.hasSuffix("operation:RES_addNewPlant") }.count == 7)
                #expect(answers.filter { $0.hasSuffix("operation:ERR_tooManyPlants") }.count == 23)

                await seen.reset()
                for index in 0..<10 {
                    try phone.publish(
                        topic: "rpi/torpi/r\(index)", payload: Self.request(index, from: "r\(index)", "REQ_numPlants"),
                        qos: .atLeastOnce)
                }
                try await seen.wait(timeout: .seconds(30), "10 answers") { $0.count >= 10 }
                #expect(await seen.all().allSatisfy { $0.text?.contains("payload:7;") == true })

                let store = try await PostgresStore.connect(url, owner: "checker")
                #expect(try await store.plants().count == 7)
                try await store.close()
                try await Self.stop(relays)
                await phone.shutdown()
            }
        }
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

    @Test("a spammer spread over both relays is limited once: 15 answers, one kick, the rest muted")
    func spamAcrossRelays() async throws {
        try await withTestBroker { broker in
            try await PostgresTestServer.withDatabase { url in
                let relays = try await Self.startRelays(["r1", "r2"], broker: broker, store: url)
                let (spammer, seen) = try await TestClients.connectCollecting(
                    to: broker, id: "spammer", "rpi/fromrpi/spammer", "trellis/deadletter")
                for index in 0..<30 {
                    try spammer.publish(
                        topic: "rpi/torpi/spammer", payload: Self.request(index, from: "spammer", "REQ_numPlants"),
                        qos: .atLeastOnce)
                }
                // Each message is answered (15), kicked (answer and dead letter) or muted (dead letter).
                try await seen.wait(timeout: .seconds(60), "every message handled") {
                    $0.filter { $0.topic == "trellis/deadletter" }.count >= 15
                        && $0.filter { $0.topic != "trellis/deadletter" }.count >= 16
                }
                let answers = await seen.received(on: "rpi/fromrpi/spammer").compactMap(\.text)
                #expect(answers.filter { $0.hasSuffix("operation:RES_numPlants") }.count == 15)
                #expect(answers.filter { $0.hasSuffix("operation:ERR_kickedForSpam") }.count == 1)
                #expect(await seen.received(on: "trellis/deadletter").count == 15)
                try await Self.stop(relays)
                await spammer.shutdown()
            }
        }
    }

    @Test("a client's JSON requests spread over both relays are limited for the group: about the burst, not twice it")
    func requestRateAcrossRelays() async throws {
        try await withTestBroker { broker in
            try await PostgresTestServer.withDatabase { url in
                let relays = try await Self.startRelays(
                    ["r1", "r2"], broker: broker, store: url,
                    settings: ["TRELLIS_LIMITS_REQUESTS_PER_SECOND": "0.001", "TRELLIS_LIMITS_REQUESTS_BURST": "10"])
                // Each relay counts the other online, so each allows its half of the burst.
                for relay in relays { try await relay.waitForOutput("a relay of the share group is known") }
                let reply = "trellis/clients/app1/response/catalog/search"
                let (client, seen) = try await TestClients.connectCollecting(to: broker, id: "app1", reply)
                for _ in 0..<30 {
                    try client.publish(
                        topic: "trellis/clients/app1/request/catalog/search", payload: Array(#"{"limit":1}"#.utf8),
                        qos: .atLeastOnce)
                }
                let replies = try await seen.messages(on: reply, count: 30, timeout: .seconds(60)).compactMap(\.text)
                let served = replies.filter { $0.contains(#""status":"ok""#) }.count
                let limited = replies.filter { $0.contains(#""code":"rate_limited""#) }.count
                #expect(served + limited == 30, "\(replies)")
                // Alone, each relay would allow its own 10: 20 in all. Shared, the two allow about 10.
                #expect((8...12).contains(served), "\(served) served of 30 with a burst of 10 for the group")
                print("share group rate: \(served) of 30 requests served with a burst of 10 over two relays")
                try await Self.stop(relays)
                await client.shutdown()
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
