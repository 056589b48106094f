import Foundation
import GRDB
import Testing
import TrellisTestSupport
import TrellisCore
@testable import TrellisStore
@testable import TrellisStoreSQLite

@Suite("BrowseStore on SQLite")
struct BrowseStoreTests {
    @Test(
        "10,000 buttons and 1,000 clients: ROOT pages in SQL, each entity once; 100 buttons' facts in one call (prints the time)",
        .timeLimit(.minutes(5)))
    func scale() async throws {
        try await withSQLiteStore(.directory) { store async throws in
            try await store.writer.write { db in
                let button = try db.makeStatement(sql: "INSERT INTO button (id, total) VALUES (?, 1)")
                for index in 0..<10_000 { try button.execute(arguments: [String(format: "b%05d", index)]) }
                let client = try db.makeStatement(sql: "INSERT INTO client (id, online, status_at) VALUES (?, 1, 0)")
                let registration = try db.makeStatement(
                    sql: """
                        INSERT INTO registration (button_id, client_id, missed, registered_at) VALUES (?, ?, 0, 0)
                        """)
                for index in 0..<1_000 {
                    let id = String(format: "c%04d", index)
                    try client.execute(arguments: [id])
                    try registration.execute(arguments: [String(format: "b%05d", index * 10), id])
                }
            }
            #expect(try await store.browseRootCount() == 11_000)
            let clock = ContinuousClock()
            let start = clock.now
            var seen = Set<EntityRef>()
            var offset = 0
            while true {
                let page = try await store.browseRoot(offset: offset, limit: 500)
                seen.formUnion(page)
                offset += page.count
                if page.count < 500 { break }
            }
            let paged = clock.now - start
            #expect(seen.count == 11_000 && offset == 11_000)
            let drillStart = clock.now
            let hundred = (0..<100).map { EntityRef(.button, String(format: "b%05d", $0 * 10)) }
            let facts = try await store.browseFacts(hundred, detail: false)
            let drilled = clock.now - drillStart
            #expect(facts.count == 100)
            #expect(facts[EntityRef(.button, "b00010")]?.children == [EntityRef(.client, "c0001")])
            print("browse: 22 ROOT pages over 11,000 entities took \(paged); facts of 100 buttons took \(drilled)")
        }
    }

    @Test(
        "entities that do not exist have no facts; a species counts only while a plant is linked to it",
        arguments: StoreKind.bothStores)
    func existence(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            try await store.upsertSpecies([
                Species(
                    symbol: "NEEX", scientificName: "Nephrolepis exaltata", commonName: "Boston swordfern",
                    moistureUse: .high, shadeTolerance: .tolerant, minTempF: 28)
            ])
            let refs = [
                EntityRef(.plant, "1"), EntityRef(.plant, "x"), EntityRef(.sensor, "0x36"), EntityRef(.species, "NEEX"),
                EntityRef(.model, "m1"), EntityRef(.model, "1"), EntityRef(.device, "d"), EntityRef(.client, "c")
            ]
            #expect(try await store.browseFacts(refs, detail: true).isEmpty)
            #expect(try await store.browseRootCount() == 0)
        }
    }
}
