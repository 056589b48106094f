import Foundation
import Testing
import TrellisTestSupport
import TrellisCore
@testable import TrellisStore

@Suite("PlantStore: renaming a plant")
struct PlantRenameTests {
    @Test("a rename keeps the plant's row, sensors, readings, species link and alerts", arguments: StoreKind.allCases)
    func keepsEverything(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            #expect(try await store.addPlant(name: "Basil", sensors: ["0x37", "0x38"], maxPlants: 7).plantID != nil)
            #expect(try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 7).plantID != nil)
            try await store.recordReading(
                sensor: "0x37", moisture: 4, temperature: 68, at: Date(timeIntervalSince1970: 1_000))
            _ = try await store.upsertSpecies([
                Species(
                    symbol: "OCBA", scientificName: "Ocimum basilicum", commonName: "sweet basil",
                    moistureUse: .medium, shadeTolerance: .intolerant, minTempF: 40)
            ])
            #expect(
                try await store.linkPlant(plant: "Basil", symbol: "OCBA", at: Date(timeIntervalSince1970: 1_000))
                    == .linked)
            let dry = CareCondition(kind: .dry, sensor: "0x37", value: 1, limit: 5)
            _ = try await store.updateCareAlerts(
                plant: "Basil", conditions: [dry], at: Date(timeIntervalSince1970: 2_000))
            let before = try await store.plants()

            #expect(try await store.renamePlant(from: "Basil", to: "Thai Basil").plantID != nil)

            let after = try await store.plants()
            #expect(after.map(\.name) == ["Thai Basil", "Fern"])
            #expect(
                after[0].id == before[0].id && after[0].sensors == ["0x37", "0x38"]
                    && after[0].createdAt == before[0].createdAt)
            #expect(try await store.sensorRecords(plant: "Thai Basil")?.first?.moisture == 4)
            #expect(try await store.sensorRecords(plant: "Basil") == nil)
            let linked = try #require(try await store.linkedPlant(plant: "Thai Basil"))
            #expect(linked.species.symbol == "OCBA")
            #expect(try await store.linkedPlant(plant: "Basil") == nil)
            // The alert moved: the same condition is no change for the new name.
            let update = try await store.updateCareAlerts(
                plant: "Thai Basil", conditions: [dry], at: Date(timeIntervalSince1970: 3_000))
            #expect(update.changed == false)
            #expect(update.alerts.first?.since == Date(timeIntervalSince1970: 2_000))
        }
    }

    @Test("a taken name, an unknown plant and equal names change nothing")
    func refusals() async throws {
        try await withStore(.inMemory) { store async throws in
            #expect(try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 7).plantID != nil)
            #expect(try await store.addPlant(name: "Mint", sensors: ["0x39"], maxPlants: 7).plantID != nil)
            #expect(try await store.renamePlant(from: "Fern", to: "Mint") == .nameTaken)
            #expect(try await store.renamePlant(from: "Rose", to: "Mint") == .nameTaken)
            #expect(try await store.renamePlant(from: "Rose", to: "Tulip") == .notFound)
            #expect(try await store.renamePlant(from: "Fern", to: "Fern").plantID != nil)
            #expect(try await store.renamePlant(from: "Rose", to: "Rose") == .notFound)
            #expect(try await store.renamePlant(from: "Fern", to: "fern").plantID != nil)
            #expect(try await store.plants().map(\.name) == ["fern", "Mint"])
        }
    }
}
