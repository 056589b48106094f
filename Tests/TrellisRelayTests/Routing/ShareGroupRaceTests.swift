import Foundation
import Testing
import TrellisCore
import TrellisMQTTTypes
import TrellisRelay
import TrellisStore
import TrellisStorePostgres
import TrellisTestSupport

/// Two relays of one share group on one PostgreSQL database, as two `trellis run --share g` are: each
/// an engine over its own connections to the database, both handling at once. The broker's round
/// robin is the test's: relay `n % 2` takes message `n`. Whichever relay answers, the state and the
/// limits are the group's. What the broker does for a group (sharing out, sessions of a relay
/// killed, presence, retained states) is `ScaleOutTests`' and `ShareGroupTests`'.
@Suite("Share groups: two relays racing on one database", .enabled(if: PostgresTestServer.isRequired))
struct ShareGroupRaceTests {
    /// Runs `body` with relays r1 and r2 of share group `g` on a fresh database, then closes their stores.
    static func withTwoRelays(
        settings: RelaySettings = RelaySettings(), _ body: ([EngineRecorder]) async throws -> Void
    ) async throws {
        try await PostgresTestServer.withDatabase { url in
            try await closing(try await PostgresStore.connect(url, owner: "r1")) { first in
                try await closing(try await PostgresStore.connect(url, owner: "r2")) { second in
                    let relays = [("r1", first), ("r2", second)].map { id, store in
                        var shared = settings
                        shared.shareGroup = "g"
                        shared.clientID = id
                        return EngineRecorder(EngineHarness(store: store, settings: shared))
                    }
                    try await body(relays)
                    for relay in relays { try await relay.store.flush() }
                }
            }
        }
    }

    /// Sends the `count` messages `message(n)` makes, message `n` to relay `n % 2`, both relays at
    /// once (each takes its messages in order, as a relay's loop does); every message each published.
    static func race(
        _ relays: [EngineRecorder], _ count: Int, _ message: @escaping @Sendable (Int) -> (topic: String, text: String)
    ) async -> [MQTTMessage] {
        await withTaskGroup(of: [MQTTMessage].self) { group in
            for (index, relay) in relays.enumerated() {
                group.addTask {
                    var out: [MQTTMessage] = []
                    for n in stride(from: index, to: count, by: relays.count) {
                        let (topic, text) = message(n)
                        out += await relay.send(text, on: topic)
                    }
                    return out
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
    }

    static func request(_ id: Int, from client: String, _ operation: String, payload: String = "") -> String {
        "ID:\(id);sender:\(client);receiver:Host-RPI3B+;payload:\(payload);operation:\(operation)"
    }

    @Test("30 racing adds through two relays: each answered once, exactly 7 plants; every read sees them")
    func plantLimitRace() async throws {
        try await Self.withTwoRelays { relays in
            let added = await Self.race(relays, 30) { n in
                ("rpi/torpi/c\(n)", Self.request(n, from: "c\(n)", "REQ_addNewPlant", payload: "P\(n),0x\(n + 10)"))
            }
            let answers = added.filter { $0.topic.hasPrefix("rpi/fromrpi/") }.compactMap(\.text)
            #expect(answers.count == 30)
            #expect(answers.filter { $0.hasSuffix("operation:RES_addNewPlant") }.count == 7)
            #expect(answers.filter { $0.hasSuffix("operation:ERR_tooManyPlants") }.count == 23)

            let read = await Self.race(relays, 10) { n in
                ("rpi/torpi/r\(n)", Self.request(n, from: "r\(n)", "REQ_numPlants"))
            }
            let counts = read.filter { $0.topic.hasPrefix("rpi/fromrpi/") }.compactMap(\.text)
            #expect(counts.count == 10)
            #expect(counts.allSatisfy { $0.contains("payload:7;") }, "\(counts)")
            let plants = try await relays[0].store.plants()
            #expect(plants.count == 7)
        }
    }

    @Test("a spammer spread over both relays is limited once: 15 answers, one kick, the rest muted")
    func spamAcrossRelays() async throws {
        try await Self.withTwoRelays { relays in
            let out = await Self.race(relays, 30) { n in
                ("rpi/torpi/spammer", Self.request(n, from: "spammer", "REQ_numPlants"))
            }
            let answers = out.filter { $0.topic == "rpi/fromrpi/spammer" }.compactMap(\.text)
            #expect(answers.filter { $0.hasSuffix("operation:RES_numPlants") }.count == 15, "\(answers)")
            #expect(answers.filter { $0.hasSuffix("operation:ERR_kickedForSpam") }.count == 1, "\(answers)")
            #expect(answers.count == 16, "\(answers)")
            // Each message is answered (15), kicked (answer and dead letter) or muted (dead letter).
            #expect(out.filter { $0.topic == "trellis/deadletter" }.count == 15)
        }
    }

    @Test("a client's JSON requests spread over both relays are limited for the group: the burst, not twice it")
    func requestRateAcrossRelays() async throws {
        var settings = RelaySettings()
        settings.requestRate = RateLimit(rate: 0.001, burst: 10)
        try await Self.withTwoRelays(settings: settings) { relays in
            // Each relay counts the other online (`ShareGroupTests` hears it on trellis/status/+), so
            // each allows its half of the burst.
            for relay in relays { relay.harness.engine.limits.shareRates(among: 2) }
            let reply = "trellis/clients/app1/response/catalog/search"
            let out = await Self.race(relays, 30) { _ in
                ("trellis/clients/app1/request/catalog/search", #"{"limit":1}"#)
            }
            let replies = out.filter { $0.topic == reply }.compactMap(\.text)
            let served = replies.filter { $0.contains(#""status":"ok""#) }.count
            let limited = replies.filter { $0.contains(#""code":"rate_limited""#) }.count
            #expect(replies.count == 30 && served + limited == 30, "\(replies)")
            // Alone, each relay would allow its own 10: 20 in all. Shared, the two allow 10.
            #expect(served == 10, "\(served) served of 30 with a burst of 10 for the group")
        }
    }
}
