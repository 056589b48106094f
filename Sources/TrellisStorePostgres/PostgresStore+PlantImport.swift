import Foundation
import TrellisCore
import TrellisStore
import PostgresNIO

/// ``PlantImportStore`` over PostgreSQL: one transaction under the plant-limit lock every add
/// takes (``plantLimitLock``), so relays adding plants meanwhile count one at a time with it.
extension PostgresStore: PlantImportStore {
    public func importPlants(_ plants: [ImportedPlant], maxPlants: Int, mode: PlantImportMode) async throws
        -> PlantImportOutcome
    {
        let now = Date().storeMilliseconds
        let logger = self.logger
        return try await write("importPlants(\(plants.count) plants)") { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.plantLimitLock))", logger: logger)
            var count = Int(
                try await connection.values("SELECT count(*) FROM plant", as: Int64.self, logger: logger).first ?? 0)
            var verdicts: [PlantImportVerdict] = []
            for plant in plants {
                let name = plant.name
                var existing: [String]?
                if let id = try await connection.values(
                    "SELECT id FROM plant WHERE name = \(name)", as: Int64.self, logger: logger
                ).first {
                    existing = try await connection.values(
                        "SELECT sensor FROM plant_sensor WHERE plant_id = \(id) ORDER BY position", as: String.self,
                        logger: logger)
                }
                verdicts.append(.judge(sensors: plant.sensors, existing: existing, count: &count, maxPlants: maxPlants))
            }
            let applies = PlantImportOutcome.applies(verdicts, mode: mode)
            if applies {
                for (plant, verdict) in zip(plants, verdicts) where verdict == .add {
                    let name = plant.name
                    // No ON CONFLICT: a name taken meanwhile fails the transaction, which then adds nothing.
                    guard
                        let id = try await connection.values(
                            "INSERT INTO plant (name, created_at) VALUES (\(name), \(now)) RETURNING id",
                            as: Int64.self, logger: logger
                        ).first
                    else { continue }
                    try await Self.insertSensors(plant.sensors, plant: id, on: connection, logger: logger)
                }
            }
            return PlantImportOutcome(verdicts: verdicts, applied: applies && verdicts.contains(.add))
        }
    }
}
