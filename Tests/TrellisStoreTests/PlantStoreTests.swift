import Foundation
import Testing
import TrellisTestSupport
import TrellisCore
@testable import TrellisStore

@Suite("PlantStore on SQLite")
struct PlantStoreTests {
    @Test("adding plants keeps names, sensor order and ids", arguments: StoreKind.allCases)
    func addAndList(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let before = Date()
            #expect(try await store.addPlant(name: "Fern", sensors: ["0x36", "0x10"], maxPlants: 5).plantID != nil)
            #expect(try await store.addPlant(name: "Basil", sensors: ["0x20"], maxPlants: 5).plantID != nil)
            let plants = try await store.plants()
            #expect(plants.map(\.name) == ["Fern", "Basil"])
            #expect(plants.map(\.sensors) == [["0x36", "0x10"], ["0x20"]])
            #expect(plants[0].id < plants[1].id)
            #expect(abs(plants[0].createdAt.timeIntervalSince(before)) < 5)
        }
    }

    @Test("a repeated sensor is kept once, at its first place")
    func repeatedSensor() async throws {
        try await withStore(.inMemory) { store async throws in
            #expect(
                try await store.addPlant(name: "Fern", sensors: ["0x36", "0x10", "0x36"], maxPlants: 5).plantID != nil)
            #expect(try await store.plants().first?.sensors == ["0x36", "0x10"])
        }
    }

    @Test("a taken name is refused, case-sensitively", arguments: StoreKind.allCases)
    func nameTaken(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            #expect(try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 5).plantID != nil)
            #expect(try await store.addPlant(name: "Fern", sensors: ["0x10"], maxPlants: 5) == .nameTaken)
            #expect(try await store.addPlant(name: "fern", sensors: ["0x10"], maxPlants: 5).plantID != nil)
            let plants = try await store.plants()
            #expect(plants.map(\.name) == ["Fern", "fern"])
            #expect(plants[0].sensors == ["0x36"])
        }
    }

    @Test("the plant limit is enforced; a taken name wins over the limit", arguments: StoreKind.allCases)
    func limit(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            #expect(try await store.addPlant(name: "A", sensors: ["0x03"], maxPlants: 2).plantID != nil)
            #expect(try await store.addPlant(name: "B", sensors: ["0x04"], maxPlants: 2).plantID != nil)
            #expect(try await store.addPlant(name: "C", sensors: ["0x05"], maxPlants: 2) == .tooManyPlants)
            #expect(try await store.addPlant(name: "A", sensors: ["0x05"], maxPlants: 2) == .nameTaken)
            #expect(try await store.addPlant(name: "C", sensors: ["0x05"], maxPlants: 3).plantID != nil)
            #expect(try await store.plants().count == 3)
        }
    }

    @Test("concurrent adds never exceed the limit")
    func concurrentLimit() async throws {
        try await withStore(.directory) { store async throws in
            let outcomes = try await withThrowingTaskGroup(of: AddPlantOutcome.self) { group in
                for index in 0..<40 {
                    group.addTask { try await store.addPlant(name: "P\(index)", sensors: ["0x10"], maxPlants: 10) }
                }
                return try await group.reduce(into: [AddPlantOutcome]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0.plantID != nil }.count == 10)
            #expect(outcomes.filter { $0 == .tooManyPlants }.count == 30)
            #expect(try await store.plants().count == 10)
        }
    }

    @Test("deleting removes the plant and its sensor links, readings stay", arguments: StoreKind.allCases)
    func delete(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            _ = try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 5)
            try await store.recordReading(sensor: "0x36", moisture: 4, temperature: 21.5, at: instant(1))
            #expect(try await store.deletePlant(name: "Fern") != nil)
            #expect(try await store.deletePlant(name: "Fern") == nil)
            #expect(try await store.plants().isEmpty)
            #expect(try await store.sensorRecords(plant: "Fern") == nil)
            let counts = try await store.counts()
            #expect(counts.plants == 0)
            #expect(counts.sensors == 0)
            #expect(counts.sensorReadings == 1)

            _ = try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 5)
            #expect(
                try await store.sensorRecords(plant: "Fern")
                    == [
                        PlantSensorRecord(plant: "Fern", sensor: "0x36", moisture: 4, temperature: 21.5, at: instant(1))
                    ])
        }
    }

    /// What a store answers now (from memory, without a wait: ``StoreOperations/answerNow(_:)``) is
    /// what it reads, and never an answer older than a reading it was given.
    @Test("records answered now are the records read, and never older than a reading", arguments: StoreKind.allCases)
    func recordsAnsweredNow(_ kind: StoreKind) async throws {
        func now(_ store: any TrellisStore, _ plant: String?) -> [PlantSensorRecord]?? {
            guard case let .sensorRecords(records)? = store.answerNow(.sensorRecords(plant: plant)) else { return nil }
            return .some(records)
        }
        try await withStore(kind) { store async throws in
            _ = try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 5)
            _ = try await store.addPlant(name: "Ivy", sensors: ["0x37", "0x38"], maxPlants: 5)
            try await store.recordReading(sensor: "0x36", moisture: 4, temperature: 21.5, at: instant(1))
            for plant in [nil, "Fern", "Ivy", "Nope"] as [String?] {
                let read = try await store.sensorRecords(plant: plant)
                let answered = now(store, plant)
                // SQLite holds what it just read; PostgreSQL, shared, must always be asked.
                #expect((answered == nil) == (kind == .postgres))
                if let answered { #expect(answered == read) }
            }
            try await store.recordReading(sensor: "0x36", moisture: 9, temperature: 22, at: instant(2))
            if let answered = now(store, "Fern") {
                #expect(answered?.first?.moisture == 9)
            }
            try await store.flush()
            if let answered = now(store, "Fern") {
                #expect(answered?.first?.moisture == 9)
            }
            #expect(try await store.sensorRecords(plant: "Fern")?.first?.moisture == 9)
            // Read again once the reading is committed, the answer is held anew.
            #expect((now(store, "Fern") == nil) == (kind == .postgres))
            if let answered = now(store, "Fern") {
                #expect(answered?.first?.moisture == 9)
            }
        }
    }

    @Test("ids are not reused after a delete")
    func stableIDs() async throws {
        try await withStore(.inMemory) { store async throws in
            _ = try await store.addPlant(name: "A", sensors: ["0x10"], maxPlants: 5)
            _ = try await store.addPlant(name: "B", sensors: ["0x11"], maxPlants: 5)
            let idB = try #require(try await store.plants().last?.id)
            _ = try await store.deletePlant(name: "B")
            _ = try await store.addPlant(name: "C", sensors: ["0x12"], maxPlants: 5)
            #expect(try await store.plants().last?.id == idB + 1)
        }
    }

    @Test("the newest reading per sensor wins; an older one is ignored", arguments: StoreKind.allCases)
    func readings(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            _ = try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 5)
            try await store.recordReading(sensor: "0x36", moisture: 3, temperature: 20.25, at: instant(10.123))
            try await store.recordReading(sensor: "0x36", moisture: 7, temperature: 22.5, at: instant(20.456))
            try await store.recordReading(sensor: "0x36", moisture: 1, temperature: -4, at: instant(15))
            #expect(
                try await store.sensorRecords(plant: "Fern")
                    == [
                        PlantSensorRecord(
                            plant: "Fern", sensor: "0x36", moisture: 7, temperature: 22.5, at: instant(20.456))
                    ])

            try await store.recordReading(sensor: "0x36", moisture: 9, temperature: 30.75, at: instant(21))
            #expect(try await store.sensorRecords(plant: "Fern")?.first?.moisture == 9)
        }
    }

    @Test("sensor records cover never-reported sensors, every plant, and unknown plants", arguments: StoreKind.allCases)
    func sensorRecords(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            #expect(try await store.sensorRecords(plant: nil) == [])
            _ = try await store.addPlant(name: "Fern", sensors: ["0x36", "0x10"], maxPlants: 5)
            _ = try await store.addPlant(name: "Basil", sensors: ["0x10"], maxPlants: 5)
            try await store.recordReading(sensor: "0x10", moisture: 5, temperature: 19, at: instant(1))

            #expect(
                try await store.sensorRecords(plant: "Fern") == [
                    PlantSensorRecord(plant: "Fern", sensor: "0x36"),
                    PlantSensorRecord(plant: "Fern", sensor: "0x10", moisture: 5, temperature: 19, at: instant(1))
                ])
            #expect(
                try await store.sensorRecords(plant: nil) == [
                    PlantSensorRecord(plant: "Fern", sensor: "0x36"),
                    PlantSensorRecord(plant: "Fern", sensor: "0x10", moisture: 5, temperature: 19, at: instant(1)),
                    PlantSensorRecord(plant: "Basil", sensor: "0x10", moisture: 5, temperature: 19, at: instant(1))
                ])
            #expect(try await store.sensorRecords(plant: "Rose") == nil)
            #expect(try await store.sensorRecords(plant: "fern") == nil)
        }
    }

    @Test("seeding inserts only absent plants and ignores the limit", arguments: StoreKind.allCases)
    func seed(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            _ = try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 5)
            let added = try await store.seedPlants([
                (name: "Fern", sensors: ["0x77"]), (name: "Basil", sensors: ["0x10", "0x11"])
            ])
            #expect(added == 1)
            #expect(try await store.seedPlants([(name: "Basil", sensors: ["0x12"])]) == 0)
            let plants = try await store.plants()
            #expect(plants.map(\.name) == ["Fern", "Basil"])
            #expect(plants.map(\.sensors) == [["0x36"], ["0x10", "0x11"]])
        }
    }
}

/// How a store's reads are served: answers kept until the next write, and which reads wait on a server.
@Suite("The store's answers kept until the next write, and its reads that wait on a server")
struct CommittedReadCacheTests {
    @Test(
        "sensor records, for every plant and for one, follow every reading, added plant and deleted plant",
        arguments: StoreKind.allCases)
    func followsWrites(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            #expect(try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 7).plantID != nil)
            #expect(try await store.sensorRecords(plant: nil)?.map(\.moisture) == [nil])
            #expect(try await store.sensorRecords(plant: "Ivy") == nil)
            try await store.recordReading(sensor: "0x36", moisture: 4, temperature: 70, at: instant(1))
            #expect(try await store.sensorRecords(plant: nil)?.map(\.moisture) == [4])
            #expect(try await store.sensorRecords(plant: "Fern")?.map(\.moisture) == [4])
            try await store.recordReading(sensor: "0x36", moisture: 6, temperature: 70, at: instant(2))
            #expect(try await store.sensorRecords(plant: nil)?.map(\.moisture) == [6])
            #expect(try await store.sensorRecords(plant: "Fern")?.map(\.moisture) == [6])
            #expect(try await store.addPlant(name: "Ivy", sensors: ["0x37"], maxPlants: 7).plantID != nil)
            #expect(try await store.sensorRecords(plant: nil)?.map(\.plant) == ["Fern", "Ivy"])
            #expect(try await store.sensorRecords(plant: "Ivy")?.map(\.sensor) == ["0x37"])
            #expect(try await store.deletePlant(name: "Fern") != nil)
            #expect(try await store.sensorRecords(plant: nil)?.map(\.plant) == ["Ivy"])
            #expect(try await store.sensorRecords(plant: "Fern") == nil)
        }
    }

    @Test("a device looked up follows its rename and its deletion", arguments: StoreKind.allCases)
    func deviceFollowsWrites(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            #expect(try await store.device(id: "node-1") == nil)
            _ = try await store.registerDevice(id: "node-1", maxDevices: 10, at: instant(1))
            #expect(try await store.device(id: "node-1")?.name == nil)
            _ = try await store.updateDevice(id: "node-1", name: .some("porch"), modelID: nil)
            #expect(try await store.device(id: "node-1")?.name == "porch")
            _ = try await store.deleteDevice(id: "node-1")
            #expect(try await store.device(id: "node-1") == nil)
        }
    }

    @Test("a read that started before a write is not kept, and a full cache starts over")
    func generationsAndCapacity() {
        let cache = CommittedReadCache<String, Int>(capacity: 2)
        let before = cache.lookup("a")
        cache.invalidate()
        cache.keep(1, for: "a", readAt: before.generation)
        #expect(cache.lookup("a").answer == nil)
        let now = cache.lookup("a").generation
        cache.keep(1, for: "a", readAt: now)
        cache.keep(2, for: "b", readAt: now)
        #expect(cache.lookup("a").answer == 1)
        cache.keep(3, for: "c", readAt: now)
        #expect(cache.lookup("a").answer == nil)
        #expect(cache.lookup("c").answer == 3)
        // The answer looked up last is the one a repeated lookup finds, until it is replaced or a
        // write drops it.
        cache.keep(4, for: "c", readAt: now)
        #expect(cache.lookup("c").answer == 4)
        #expect(cache.lookup("c").answer == 4)
        cache.invalidate()
        #expect(cache.lookup("c").answer == nil)
    }

    /// What the message loop asks a store before it overlaps read requests in tasks of their own.
    /// Only PostgreSQL's reads are round trips worth overlapping; SQLite answers in the process,
    /// where a task per read costs more than it saves (docs/benchmark.md).
    @Test("only PostgreSQL's reads wait on a server", arguments: StoreKind.allCases)
    func readsWaitOnServer(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            #expect(store.readsWaitOnServer == (kind == .postgres))
        }
    }
}

@Suite("Deleting a plant drops its species link")
struct PlantDeletionLinkTests {
    @Test("a plant deleted and added again under the same name starts unlinked, without alerts")
    func relinkAfterDelete() async throws {
        try await withStore(.inMemory) { store async throws in
            try await store.upsertSpecies([
                Species(
                    symbol: "NEEX", scientificName: "Nephrolepis exaltata", commonName: "Boston swordfern",
                    moistureUse: .high, shadeTolerance: .tolerant, minTempF: 28)
            ])
            #expect(try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 7).plantID != nil)
            #expect(try await store.linkPlant(plant: "Fern", symbol: "NEEX", at: instant(1)) == .linked)
            _ = try await store.updateCareAlerts(plant: "Fern", conditions: [], at: instant(2))
            #expect(try await store.deletePlant(name: "Fern") != nil)
            #expect(try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 7).plantID != nil)
            #expect(try await store.linkedPlant(plant: "Fern") == nil)
            #expect(try await store.unlinkPlant(plant: "Fern") == false)
        }
    }
}
