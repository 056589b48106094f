import Foundation
import Testing
import TrellisTestSupport
import TrellisCore
@testable import TrellisStore

private func species(
    _ symbol: String, _ moisture: MoistureUse = .medium, _ shade: ShadeTolerance = .intermediate,
    _ minTemp: Double = 0, common: String? = nil
) -> Species {
    Species(
        symbol: symbol, scientificName: "Plantus \(symbol.lowercased())", commonName: common ?? "plant \(symbol)",
        moistureUse: moisture, shadeTolerance: shade, minTempF: minTemp)
}

/// 60 species across every requirement and bucket.
private let sample: [Species] = (0..<60).map { index in
    species(
        "P\(index)", MoistureUse.allCases[index % 3], ShadeTolerance.allCases[(index / 3) % 3],
        [-40.0, 0, 50][(index / 9) % 3], common: index % 10 == 0 ? "Maple \(index)" : nil)
}

@Suite("Catalog store", .serialized)
struct CatalogStoreTests {
    @Test("upsert by symbol; seeding only an empty catalog", arguments: StoreKind.allCases)
    func upsertAndSeed(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            #expect(try await store.seedCatalogIfEmpty(sample) == 60)
            #expect(try await store.seedCatalogIfEmpty([species("NEW")]) == 0)
            var changed = species("P1", .high)
            changed.imageURL = "https://example.org/p1.jpg"
            try await store.upsertSpecies([changed, species("NEW")])
            #expect(try await store.speciesCount() == 61)
            #expect(try await store.species(symbol: "P1") == changed)
            try await store.upsertSpecies([species("P1", .low)])
            #expect(try await store.species(symbol: "P1")?.imageURL == "https://example.org/p1.jpg")
            #expect(try await store.species(symbol: "NOPE") == nil)
        }
    }

    @Test(
        "search matches the pure filter, in the seed's order, page by page", arguments: StoreKind.bothStores,
        [
            CatalogFilter(),
            CatalogFilter(moisture: .high),
            CatalogFilter(shade: .tolerant, minTemp: TemperatureRange.bucket(named: "-17..23")),
            CatalogFilter(moisture: .low, shade: .intolerant, minTemp: TemperatureRange.bucket(named: "23..100")),
            CatalogFilter(name: "MAPLE"),
            CatalogFilter(moisture: .low, name: "maple")
        ])
    func searchPaging(kind: StoreKind, filter: CatalogFilter) async throws {
        try await withStore(kind) { store in
            try await store.upsertSpecies(sample)
            let expected = CatalogShuffle.order(sample.filter(filter.matches), seed: 7)
            var seen: [Species] = []
            var after: CatalogCursor?
            repeat {
                let page = try await store.searchSpecies(CatalogSearch(filter: filter, seed: 7, after: after, limit: 4))
                #expect(page.species.count <= 4)
                seen += page.species
                after = page.next
            } while after != nil
            #expect(seen == expected)
        }
    }

    @Test(
        "unseen_only never repeats for that client, and other clients are unaffected", arguments: StoreKind.bothStores)
    func unseenOnly(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.upsertSpecies(sample)
            var shown: [String] = []
            for seed in 0..<20 as Range<UInt64> {
                let page = try await store.searchSpecies(
                    CatalogSearch(
                        filter: CatalogFilter(), seed: seed, limit: 7,
                        client: "ann", unseenOnly: true))
                shown += page.species.map(\.symbol)
            }
            #expect(shown.count == 60)
            #expect(Set(shown).count == 60)
            let other = try await store.searchSpecies(
                CatalogSearch(
                    filter: CatalogFilter(), seed: 1, limit: 50,
                    client: "bob", unseenOnly: true))
            #expect(other.species.count == 50)
        }
    }

    @Test("likes: a second like is reported, unknown species refused", arguments: StoreKind.allCases)
    func likes(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.upsertSpecies(sample)
            #expect(try await store.addLike(client: "ann", symbol: "P1", at: instant(1)) == .added)
            #expect(try await store.addLike(client: "ann", symbol: "P2", at: instant(2)) == .added)
            #expect(try await store.addLike(client: "ann", symbol: "P1", at: instant(3)) == .alreadyLiked)
            #expect(try await store.addLike(client: "ann", symbol: "ZZ", at: instant(3)) == .unknownSpecies)
            #expect(try await store.likes(client: "ann").map(\.symbol) == ["P2", "P1"])
            #expect(try await store.removeLike(client: "ann", symbol: "P1"))
            #expect(try await !store.removeLike(client: "ann", symbol: "P1"))
            #expect(try await store.likes(client: "bob").isEmpty)
        }
    }

    @Test(
        "boards: unique names per client, rename, add several, remove, delete, visibility",
        arguments: StoreKind.allCases)
    func boards(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.upsertSpecies(sample)
            guard
                case let .created(board) = try await store.createBoard(
                    client: "ann", name: "Balcony", description: "", isPublic: false, maxBoards: 3, at: instant(0))
            else {
                Issue.record("not created"); return
            }
            #expect(board.owner == "ann" && board.count == 0 && !board.isPublic)
            #expect(
                try await store.createBoard(
                    client: "ann", name: "Balcony", description: "", isPublic: true,
                    maxBoards: 3, at: instant(1)) == .nameTaken)
            guard
                case .created = try await store.createBoard(
                    client: "bob", name: "Balcony", description: "", isPublic: true,
                    maxBoards: 3, at: instant(1))
            else { Issue.record("bob"); return }
            guard
                case let .created(second) = try await store.createBoard(
                    client: "ann", name: "Shade", description: "d", isPublic: false, maxBoards: 3, at: instant(2))
            else { return }
            #expect(
                try await store.updateBoard(
                    client: "ann", id: second.id, name: "Balcony", description: nil, isPublic: nil) == .nameTaken)
            #expect(
                try await store.updateBoard(client: "bob", id: second.id, name: "x", description: nil, isPublic: nil)
                    == .notFound)
            guard
                case let .updated(renamed) = try await store.updateBoard(
                    client: "ann", id: second.id, name: "Deep shade", description: nil, isPublic: true)
            else { return }
            #expect(renamed.name == "Deep shade" && renamed.description == "d" && renamed.isPublic)

            #expect(
                try await store.addToBoard(client: "ann", id: board.id, symbols: ["P1", "P2"], maxItems: 10)
                    == BoardAddOutcome(added: ["P1", "P2"], alreadyPresent: []))
            #expect(
                try await store.addToBoard(client: "ann", id: board.id, symbols: ["P3", "P2", "P3"], maxItems: 10)
                    == BoardAddOutcome(added: ["P3"], alreadyPresent: ["P2"]))
            #expect(
                try await store.addToBoard(client: "ann", id: board.id, symbols: ["P4", "NOPE"], maxItems: 10)
                    == BoardAddOutcome(added: [], alreadyPresent: [], unknown: ["NOPE"]))
            #expect(
                try await store.addToBoard(client: "ann", id: board.id, symbols: ["P4", "P5"], maxItems: 4)
                    == BoardAddOutcome(added: [], alreadyPresent: [], tooMany: true))
            #expect(try await store.addToBoard(client: "bob", id: board.id, symbols: ["P4"], maxItems: 10) == nil)
            #expect(
                try await store.removeFromBoard(client: "ann", id: board.id, symbols: ["P2", "P9"])
                    == BoardRemoveOutcome(removed: ["P2"], notPresent: ["P9"]))

            let own = try await store.board(id: board.id, owner: nil, viewer: "ann")
            #expect(own?.species.map(\.symbol) == ["P1", "P3"])
            #expect(try await store.board(id: board.id, owner: nil, viewer: "bob") == nil)
            #expect(try await store.board(id: second.id, owner: "ann", viewer: "bob")?.board.name == "Deep shade")
            #expect(try await store.board(id: second.id, owner: "bob", viewer: "bob") == nil)
            #expect(try await store.boards(client: "ann").map(\.name) == ["Balcony", "Deep shade"])
            #expect(try await store.boards(client: "ann").first?.count == 2)

            guard
                case .created = try await store.createBoard(
                    client: "ann", name: "Third", description: "", isPublic: false,
                    maxBoards: 3, at: instant(3))
            else { return }
            #expect(
                try await store.createBoard(
                    client: "ann", name: "Fourth", description: "", isPublic: false,
                    maxBoards: 3, at: instant(3)) == .tooManyBoards)
            #expect(try await store.deleteBoard(client: "ann", id: board.id))
            #expect(try await !store.deleteBoard(client: "ann", id: board.id))
            #expect(try await store.board(id: board.id, owner: nil, viewer: "ann") == nil)
        }
    }

    @Test("links and alert state: started, kept with its since, cleared", arguments: StoreKind.allCases)
    func linksAndAlerts(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.upsertSpecies([species("FERN", .high, .tolerant, 28)])
            _ = try await store.addPlant(name: "Fern", sensors: ["0x36", "0x37"], maxPlants: 7)
            #expect(try await store.linkPlant(plant: "Nope", symbol: "FERN", at: instant(0)) == .unknownPlant)
            #expect(try await store.linkPlant(plant: "Fern", symbol: "NOPE", at: instant(0)) == .unknownSpecies)
            #expect(try await store.linkPlant(plant: "Fern", symbol: "FERN", at: instant(0)) == .linked)
            try await store.recordReading(sensor: "0x37", moisture: 1, temperature: 70, at: instant(1))
            let linked = try await store.linkedPlants(sensor: "0x37")
            #expect(linked.map(\.plant) == ["Fern"])
            #expect(linked.first?.readings == [CareReading(sensor: "0x37", moisture: 1, temperature: 70)])
            #expect(try await store.linkedPlants(sensor: "0x99").isEmpty)

            let dry = CareCondition(kind: .dry, sensor: "0x37", value: 1, limit: 5)
            let first = try await store.updateCareAlerts(plant: "Fern", conditions: [dry], at: instant(1))
            #expect(
                first
                    == CareAlertUpdate(
                        alerts: [CareAlert(kind: .dry, sensor: "0x37", value: 1, limit: 5, since: instant(1))],
                        changed: true, started: ["dry:0x37"]))
            var drier = dry
            drier.value = 2
            let again = try await store.updateCareAlerts(plant: "Fern", conditions: [drier], at: instant(2))
            #expect(
                again
                    == CareAlertUpdate(
                        alerts: [CareAlert(kind: .dry, sensor: "0x37", value: 2, limit: 5, since: instant(1))],
                        changed: false))
            #expect(
                try await store.updateCareAlerts(plant: "Fern", conditions: [], at: instant(3))
                    == CareAlertUpdate(alerts: [], changed: true, cleared: ["dry:0x37"]))
            #expect(try await store.updateCareAlerts(plant: "Fern", conditions: [], at: instant(4)).changed == false)
            #expect(try await store.unlinkPlant(plant: "Fern"))
            #expect(try await !store.unlinkPlant(plant: "Fern"))
            #expect(try await store.updateCareAlerts(plant: "Fern", conditions: [dry], at: instant(5)).alerts.isEmpty)
        }
    }

    /// Prints the time of a search with all three filters and a name over 50,000 species; no assertion on time.
    @Test("50,000 species: a search with every filter and a name (prints the time)")
    func scale() async throws {
        try await withStore(.directory) { store in
            let words = ["maple", "fern", "oak", "lily", "rose", "aster", "sedge", "pine", "ivy", "sage"]
            let many = (0..<50_000).map { index in
                species(
                    "S\(index)", MoistureUse.allCases[index % 3], ShadeTolerance.allCases[(index / 3) % 3],
                    Double(index % 150) - 75, common: "\(words[index % 10]) \(words[(index / 10) % 10]) \(index)")
            }
            try await store.upsertSpecies(many)
            let search = CatalogSearch(
                filter: CatalogFilter(
                    moisture: .high, shade: .tolerant,
                    minTemp: TemperatureRange.bucket(named: "-17..23"), name: "fern"),
                seed: 3, limit: 50)
            _ = try await store.searchSpecies(search)
            let clock = ContinuousClock()
            var page = CatalogSearchPage(species: [], next: nil)
            let rounds = 50
            let elapsed = try await clock.measure {
                for _ in 0..<rounds { page = try await store.searchSpecies(search) }
            }
            #expect(page.species.allSatisfy(search.filter.matches))
            #expect(!page.species.isEmpty)
            let each = elapsed / rounds
            print("catalog search, 50,000 species, three filters and a name: \(each) per search (mean of \(rounds))")
        }
    }
}
