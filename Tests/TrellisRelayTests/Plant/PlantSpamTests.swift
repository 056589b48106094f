import Foundation
import Testing
import TrellisRelay
import TrellisTestSupport

/// The plant tracker's spam limit, on the relay's engine over SQLite and PostgreSQL (whose spam
/// ledgers differ: memory beside SQLite, a table a share group shares on PostgreSQL).
@Suite("Plant tracker spam limit, on the engine, over every store")
struct PlantSpamTests {
    /// The lossless plant topics, with a limit of `limit` messages a minute from each sender.
    static func limited(to limit: Int) -> RelaySettings {
        var settings = RelaySettings.losslessPlants
        settings.spamLimit = limit
        settings.spamWindow = 60
        return settings
    }

    @Test(
        "over the limit: ERR_kickedForSpam once, then muted messages are dead-lettered only",
        arguments: PlantTopics.onEveryStore)
    func kickedThenMuted(_ topics: PlantTopics, _ kind: StoreKind) async throws {
        try await withEngine(kind, settings: Self.limited(to: 3)) { harness in
            let bob = EnginePhone(harness, topics: topics)
            for id in 1...3 {
                let reply = try await bob.ask(bob.request("\(id)", "REQ_numPlants"))
                #expect(reply == Wire.reply("\(id)", to: bob.name, "RES_numPlants", payload: "0"))
            }

            let fourth = bob.request("4", "REQ_numPlants")
            let kicked = try await bob.ask(fourth)
            #expect(kicked == Wire.error("4", to: bob.name, "ERR_kickedForSpam", offending: fourth))

            // Muted: a request and a malformed message, neither answered.
            let fifth = bob.request("5", "REQ_plantInfoOnStartup")
            let sixth = "ID:6;sender:Bob's iPhone;payload:x"
            try await bob.send(fifth)
            try await bob.send(sixth)

            // Another client is not affected, and its answer proves Bob's messages were handled.
            let alice = EnginePhone(harness, name: "Alice", topics: topics)
            try await alice.sendMarker()

            let letters = try bob.deadLetters()
            #expect(letters.map(\.reason) == ["ERR_kickedForSpam", "spam_muted", "spam_muted"])
            #expect(letters.map(\.payload) == [fourth, fifth, sixth])
            #expect(letters.allSatisfy { $0.topic == bob.requestTopic })

            let bobsReplies = bob.allReplies().filter { $0.contains(";receiver:Bob's iPhone;") }
            #expect(bobsReplies.count == 4)
            #expect(bobsReplies.last == kicked)
        }
    }

    @Test("malformed messages count against their sender too", arguments: PlantTopics.onEveryStore)
    func malformedCount(_ topics: PlantTopics, _ kind: StoreKind) async throws {
        try await withPhone(kind, settings: Self.limited(to: 2), topics: topics) { bob async throws in
            let bad = "ID:1;sender:Bob's iPhone;receiver:Host-RPI3B+;payload:x"
            #expect(try await bob.ask(bad) == Wire.error("1", to: bob.name, "ERR_hashLength", offending: bad))
            #expect(try await bob.ask(bad) == Wire.error("1", to: bob.name, "ERR_hashLength", offending: bad))
            #expect(try await bob.ask(bad) == Wire.error("1", to: bob.name, "ERR_kickedForSpam", offending: bad))
        }
    }

    @Test("incoming ERR_ messages are not counted, so they never earn a kick", arguments: PlantTopics.onEveryStore)
    func errorsNotCounted(_ topics: PlantTopics, _ kind: StoreKind) async throws {
        try await withPhone(kind, settings: Self.limited(to: 2), topics: topics) { bob async throws in
            for id in 1...5 {
                try await bob.send(bob.request("e\(id)", "ERR_invalidOpTag", payload: "whatever"))
            }
            try await bob.sendMarker()
            #expect(bob.allReplies().count == 1)
        }
    }
}
