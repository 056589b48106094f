import Foundation
import Testing
import TrellisCore
@testable import TrellisStore
@testable import TrellisStorePostgres
@testable import TrellisStoreSQLite
import TrellisTestSupport

/// Two relays' stores on one PostgreSQL database racing on the catalog and the device fleet: every
/// limit and "exactly once" answer holds as it does with SQLite's single writer.
@Suite("PostgreSQL: catalog and devices, two relays racing", .enabled(if: PostgresTestServer.isRequired))
struct SharedCatalogDeviceRaceTests {
    /// 40 species, one per symbol `S0` … `S39`.
    static let catalog = (0..<40).map { index in
        Species(
            symbol: "S\(index)", scientificName: "Plantus s\(index)", commonName: "plant \(index)",
            moistureUse: .high, shadeTolerance: .tolerant, minTempF: 0)
    }

    @Test("20 board creations for one client, limit 3: exactly 3 boards, and each name at most once")
    func boardLimit() async throws {
        try await withTwoRelays { one, two in
            let outcomes = try await race(20, one, two) { store, index in
                try await store.createBoard(
                    client: "ann", name: "b\(index % 10)", description: "", isPublic: false,
                    maxBoards: 3, at: instant(0))
            }
            #expect(outcomes.filter { if case .created = $0 { true } else { false } }.count == 3)
            let names = try await one.boards(client: "ann").map(\.name)
            #expect(names.count == 3 && Set(names).count == 3)
        }
    }

    @Test("20 adds of different species to one board, limit 5: the board holds 5, positions distinct")
    func boardItemLimit() async throws {
        try await withTwoRelays { one, two in
            try await one.upsertSpecies(Self.catalog)
            guard
                case let .created(board) = try await one.createBoard(
                    client: "ann", name: "x", description: "", isPublic: false, maxBoards: 3, at: instant(0))
            else {
                Issue.record("the board was not created"); return
            }
            let outcomes = try await race(20, one, two) { store, index in
                try await store.addToBoard(client: "ann", id: board.id, symbols: ["S\(index)"], maxItems: 5)
            }
            #expect(outcomes.filter { $0?.added.isEmpty == false }.count == 5)
            #expect(outcomes.filter { $0?.tooMany == true }.count == 15)
            #expect(try await two.board(id: board.id, owner: nil, viewer: "ann")?.species.count == 5)
        }
    }

    @Test("40 statuses of 20 new devices, cap 5: 5 registered, each reported registered once")
    func deviceCap() async throws {
        try await withTwoRelays { one, two in
            let updates = try await race(40, one, two) { store, index in
                try await store.recordDeviceStatus(
                    id: "d\(index / 2)", powerstate: .online, maxDevices: 5, at: instant(0))
            }
            #expect(updates.filter(\.registered).count == 5)
            #expect(try await one.deviceCount() == 5)
        }
    }

    @Test("one model name created 10 times: once; ids stay consecutive; 20 racing builds are numbered 1…20")
    func modelsAndBuilds() async throws {
        try await withTwoRelays { one, two in
            let models = try await race(10, one, two) { store, _ in
                try await store.createModel(name: "Node", at: instant(0))
            }
            #expect(models.compactMap { $0 } == [ModelRecord(id: "m1", name: "Node")])
            #expect(try await two.createModel(name: "Hub", at: instant(0))?.id == "m2")
            let builds = try await race(20, one, two) { store, _ in
                try await store.addBuild(model: "m1", deviceCode: "d", agentCode: "a", at: instant(0))
            }
            #expect(Set(builds.compactMap { $0 }) == Set(1...20))
            #expect(try await one.model(id: "m1")?.latestBuild == 20)
        }
    }

    @Test("the same care condition judged 10 times at once: it starts once, with the first `since`")
    func careAlertStartsOnce() async throws {
        try await withTwoRelays { one, two in
            try await one.upsertSpecies(Self.catalog)
            _ = try await one.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 7)
            #expect(try await two.linkPlant(plant: "Fern", symbol: "S1", at: instant(0)) == .linked)
            let dry = CareCondition(kind: .dry, sensor: "0x36", value: 1, limit: 5)
            let updates = try await race(10, one, two) { store, _ in
                try await store.updateCareAlerts(plant: "Fern", conditions: [dry], at: instant(1))
            }
            #expect(updates.filter(\.changed).count == 1)
            #expect(updates.allSatisfy { $0.alerts.map(\.kind) == [.dry] })
            let cleared = try await race(10, one, two) { store, _ in
                try await store.updateCareAlerts(plant: "Fern", conditions: [], at: instant(2))
            }
            #expect(cleared.filter(\.changed).count == 1)
        }
    }

    @Test("unseen-only pages for one client through both relays at once never repeat a species")
    func unseenAcrossRelays() async throws {
        try await withTwoRelays { one, two in
            #expect(try await one.seedCatalogIfEmpty(Self.catalog) == 40)
            let pages = try await race(8, one, two) { store, index in
                try await store.searchSpecies(
                    CatalogSearch(
                        filter: CatalogFilter(), seed: UInt64(index), limit: 5,
                        client: "bob", unseenOnly: true)
                ).species.map(\.symbol)
            }
            let shown = pages.flatMap { $0 }
            #expect(shown.count == 40 && Set(shown).count == 40)
        }
    }

    @Test("seeding an empty catalog from both relays at once: one seeds, the other finds it filled")
    func seedOnce() async throws {
        try await withTwoRelays { one, two in
            let seeded = try await race(6, one, two) { store, _ in try await store.seedCatalogIfEmpty(Self.catalog) }
            #expect(seeded.sorted() == [0, 0, 0, 0, 0, 40])
        }
    }

    @Test("a device deleted while the other relay writes its log keeps no line once registered again")
    func deleteWhileLogging() async throws {
        try await withTwoRelays { one, two in
            _ = try await one.registerDevice(id: "d", maxDevices: 10, at: instant(0))
            for line in 0..<100 {
                try await two.appendDeviceLog(
                    device: "d", entry: .status("online", at: instant(Double(line))), limit: 50)
            }
            async let deleted = one.deleteDevice(id: "d")
            for line in 100..<200 {
                try await two.appendDeviceLog(
                    device: "d", entry: .status("online", at: instant(Double(line))), limit: 50)
            }
            try await two.flush()
            #expect(try await deleted?.id == "d")
            let lines = try await one.deviceLog(device: "d", since: nil, limit: 200)
            // Lines after the delete are dropped (the device is unknown); those before went with it.
            #expect(lines.isEmpty)
            #expect(try await one.counts().deviceLogEntries == 0)
        }
    }
}

/// The same changes through SQLite and PostgreSQL read back the same: searches page for page,
/// likes, boards, devices, models, and every browse page and fact.
@Suite("PostgreSQL answers as SQLite does: catalog, devices, browse", .enabled(if: PostgresTestServer.isRequired))
struct PostgresMatchesSQLiteTests {
    @Test("one history of changes, every read compared")
    func sameAnswers() async throws {
        let sqlite = try SQLiteStore.inMemory()
        try await PostgresTestServer.withDatabase { url in
            let postgres = try await PostgresStore.connect(url, owner: "relay")
            for store in [sqlite, postgres] as [any TrellisStore] { try await Self.apply(to: store) }
            for filter in [
                CatalogFilter(), CatalogFilter(moisture: .high), CatalogFilter(name: "fern"),
                CatalogFilter(shade: .tolerant, minTemp: TemperatureRange.bucket(named: "-17..23"))
            ] {
                for seed in [0, 1, 12_345, CatalogShuffle.maximumSeed] as [UInt64] {
                    #expect(try await Self.pages(sqlite, filter, seed) == Self.pages(postgres, filter, seed))
                }
            }
            #expect(try await sqlite.likes(client: "ann") == postgres.likes(client: "ann"))
            #expect(try await Self.boardsWithoutIDs(sqlite) == Self.boardsWithoutIDs(postgres))
            #expect(
                try await sqlite.devices(modelID: nil, powerstate: nil)
                    == postgres.devices(modelID: nil, powerstate: nil))
            #expect(
                try await sqlite.devices(modelID: "m1", powerstate: .offline)
                    == postgres.devices(modelID: "m1", powerstate: .offline))
            #expect(try await sqlite.models() == postgres.models())
            #expect(
                try await sqlite.deviceLog(device: "d1", since: instant(3), limit: 2)
                    == postgres.deviceLog(device: "d1", since: instant(3), limit: 2))
            #expect(try await sqlite.linkedPlants(sensor: "0x36") == postgres.linkedPlants(sensor: "0x36"))
            #expect(try await sqlite.browseRootCount() == postgres.browseRootCount())
            let root = try await sqlite.browseRoot(offset: 0, limit: 100)
            #expect(try await postgres.browseRoot(offset: 0, limit: 100) == root)
            #expect(try await postgres.browseRoot(offset: 3, limit: 4) == sqlite.browseRoot(offset: 3, limit: 4))
            let refs =
                root + [
                    EntityRef(.sensor, "0x36"), EntityRef(.sensor, "0x37"), EntityRef(.species, "S1"),
                    EntityRef(.species, "S2"), EntityRef(.plant, "x"), EntityRef(.model, "m9")
                ]
            for detail in [false, true] {
                let expected = try await sqlite.browseFacts(refs, detail: detail)
                #expect(!expected.isEmpty)
                #expect(
                    try await Self.withoutCreation(postgres.browseFacts(refs, detail: detail))
                        == Self.withoutCreation(expected))
            }
            try await postgres.close()
        }
        try await sqlite.close()
    }

    /// The changes both stores are given.
    static func apply(to store: any TrellisStore) async throws {
        let names = ["maple", "fern", "oak", "lily"]
        try await store.upsertSpecies(
            (0..<60).map { index in
                Species(
                    symbol: "S\(index)", scientificName: "Plantus \(names[index % 4]) \(index)",
                    commonName: "\(names[(index / 4) % 4].capitalized) \(index)",
                    moistureUse: MoistureUse.allCases[index % 3],
                    shadeTolerance: ShadeTolerance.allCases[(index / 3) % 3],
                    minTempF: [-40.0, 0, 50, 28.5][index % 4])
            })
        _ = try await store.addLike(client: "ann", symbol: "S3", at: instant(1))
        _ = try await store.addLike(client: "ann", symbol: "S1", at: instant(1))
        _ = try await store.addLike(client: "ann", symbol: "S7", at: instant(2))
        if case let .created(board) = try await store.createBoard(
            client: "ann", name: "Balcony", description: "sun",
            isPublic: true, maxBoards: 3, at: instant(1))
        {
            _ = try await store.addToBoard(client: "ann", id: board.id, symbols: ["S5", "S2", "S9"], maxItems: 10)
            _ = try await store.removeFromBoard(client: "ann", id: board.id, symbols: ["S2"])
        }
        _ = try await store.createBoard(
            client: "ann", name: "Shade", description: "", isPublic: false, maxBoards: 3, at: instant(2))
        _ = try await store.addPlant(name: "Fern", sensors: ["0x36", "0x37"], maxPlants: 7)
        // Plant ids are browse keys: a refused add draws none, a seed of a taken name draws one (SQLite's AUTOINCREMENT).
        _ = try await store.addPlant(name: "Fern", sensors: ["0x39"], maxPlants: 7)
        try await store.seedPlants([(name: "Fern", sensors: [])])
        _ = try await store.addPlant(name: "Ivy", sensors: ["0x38"], maxPlants: 7)
        try await store.recordReading(sensor: "0x36", moisture: 2, temperature: 21.5, at: instant(3))
        _ = try await store.linkPlant(plant: "Fern", symbol: "S1", at: instant(3))
        _ = try await store.updateCareAlerts(
            plant: "Fern",
            conditions: [
                CareCondition(kind: .dry, sensor: "0x36", value: 2, limit: 5),
                CareCondition(kind: .cold, sensor: "0x36", value: 21.5, limit: 30)
            ], at: instant(4))
        try await store.setClientStatus(client: "phone", online: false, at: instant(5))
        _ = try await store.register(client: "phone", button: "door", at: instant(5))
        _ = try await store.recordPress(button: "door", at: instant(6), historyLimit: 20)
        _ = try await store.recordPress(button: "bell", at: instant(7), historyLimit: 20)
        _ = try await store.createModel(name: "Node", at: instant(1))
        _ = try await store.createModel(name: "Hub", at: instant(1))
        _ = try await store.addBuild(model: "m1", deviceCode: "d", agentCode: "a", at: instant(2))
        _ = try await store.recordDeviceStatus(id: "d1", powerstate: .online, maxDevices: 10, at: instant(1))
        _ = try await store.recordTelemetry(
            id: "d2", telemetry: DeviceTelemetry(rssi: .some(-61), agentID: .some("ag")),
            maxDevices: 10, at: instant(1))
        _ = try await store.updateDevice(id: "d2", name: .some("Porch"), modelID: .some("m1"))
        _ = try await store.updateDevice(id: "d1", name: nil, modelID: .some("m2"))
        for line in 0..<8 {
            try await store.appendDeviceLog(
                device: "d1",
                entry: DeviceLogEntry(
                    timestamp: instant(Double(line)), type: "Device",
                    message: "line \(line)"), limit: 6)
        }
        try await store.flush()
    }

    /// Every page of a search, with the cursors that lead to them.
    static func pages(_ store: any TrellisStore, _ filter: CatalogFilter, _ seed: UInt64) async throws
        -> [CatalogSearchPage]
    {
        var pages: [CatalogSearchPage] = []
        var after: CatalogCursor?
        repeat {
            let page = try await store.searchSpecies(CatalogSearch(filter: filter, seed: seed, after: after, limit: 7))
            pages.append(page)
            after = page.next
        } while after != nil
        return pages
    }

    /// Boards with species, without their ids (each store numbers its own).
    static func boardsWithoutIDs(_ store: any TrellisStore) async throws -> [[String]] {
        var result: [[String]] = []
        for board in try await store.boards(client: "ann") {
            let detail = try await store.board(id: board.id, owner: "ann", viewer: "ann")
            result.append(
                [board.name, board.description, "\(board.isPublic)", "\(board.count)"]
                    + (detail?.species.map(\.symbol) ?? []))
        }
        return result
    }

    /// Facts without plants' `created_at`, the one time each store takes from its own clock.
    static func withoutCreation(_ facts: [EntityRef: BrowseFacts]) -> [EntityRef: BrowseFacts] {
        facts.mapValues { facts in
            var facts = facts
            if facts.ref.kind == .plant { facts.values["created_at"] = nil }
            return facts
        }
    }
}

/// Runs `body` with two stores, as two relays would open them, on one fresh database.
func withTwoRelays(_ body: (PostgresStore, PostgresStore) async throws -> Void) async throws {
    try await withTwoRelays { _, one, two in try await body(one, two) }
}

/// Runs `body` with the database's URL and two stores, as two relays would open them, on one fresh
/// database; both closed after.
func withTwoRelays(_ body: (PostgresURL, PostgresStore, PostgresStore) async throws -> Void) async throws {
    try await PostgresTestServer.withDatabase { url in
        let one = try await PostgresStore.connect(url, owner: "relay-1")
        let two = try await PostgresStore.connect(url, owner: "relay-2")
        do {
            try await body(url, one, two)
        } catch {
            try? await one.close()
            try? await two.close()
            throw error
        }
        try await one.close()
        try await two.close()
    }
}

/// Runs `operation` `count` times at once, alternating between the two stores; the results in
/// the order they finished.
func race<T: Sendable>(
    _ count: Int, _ one: PostgresStore, _ two: PostgresStore,
    _ operation: @escaping @Sendable (PostgresStore, Int) async throws -> T
) async throws -> [T] {
    try await withThrowingTaskGroup(of: T.self) { group in
        for index in 0..<count {
            let store = index.isMultiple(of: 2) ? one : two
            group.addTask { try await operation(store, index) }
        }
        return try await group.reduce(into: []) { $0.append($1) }
    }
}
