import Foundation
import TrellisCore
import TrellisStore
import GRDB

/// ``PlantImportStore`` over SQLite: one write transaction reads what is there and adds.
extension SQLiteStore: PlantImportStore {
    public func importPlants(_ plants: [ImportedPlant], maxPlants: Int, mode: PlantImportMode) async throws
        -> PlantImportOutcome
    {
        let now = Date().storeMilliseconds
        return try await write("importPlants(\(plants.count) plants)") { db in
            var count = try Int.fetchOne(db, sql: "SELECT count(*) FROM plant") ?? 0
            var verdicts: [PlantImportVerdict] = []
            for plant in plants {
                let existing = try Int64.fetchOne(
                    db, sql: "SELECT id FROM plant WHERE name = ?", arguments: [plant.name]
                ).map { id in
                    try String.fetchAll(
                        db, sql: "SELECT sensor FROM plant_sensor WHERE plant_id = ? ORDER BY position", arguments: [id]
                    )
                }
                verdicts.append(.judge(sensors: plant.sensors, existing: existing, count: &count, maxPlants: maxPlants))
            }
            let applies = PlantImportOutcome.applies(verdicts, mode: mode)
            if applies {
                for (plant, verdict) in zip(plants, verdicts) where verdict == .add {
                    // No ON CONFLICT: a name taken meanwhile fails the transaction, which then adds nothing.
                    let id = try Int64.fetchOne(
                        db, sql: "INSERT INTO plant (name, created_at) VALUES (?, ?) RETURNING id",
                        arguments: [plant.name, now])
                    for (position, sensor) in plant.sensors.enumerated() {
                        try db.execute(
                            sql: "INSERT INTO plant_sensor (plant_id, position, sensor) VALUES (?, ?, ?)",
                            arguments: [id, position, sensor])
                    }
                }
            }
            return PlantImportOutcome(verdicts: verdicts, applied: applies && verdicts.contains(.add))
        }
    }
}
