import Foundation
import GRDB
import TrellisCore
import TrellisStore

/// ``PlantStore`` over SQLite: plant changes are single transactions, readings are written behind.
extension SQLiteStore {
    public func addPlant(name: String, sensors: [String], maxPlants: Int) async throws -> AddPlantOutcome {
        let now = Date().storeMilliseconds
        return try await write("addPlant(name: \(name))") { db in
            let id = try Int64.fetchOne(
                db,
                sql: """
                    INSERT INTO plant (name, created_at)
                    SELECT :name, :now
                    WHERE NOT EXISTS (SELECT 1 FROM plant WHERE name = :name)
                      AND (SELECT COUNT(*) FROM plant) < :maxPlants
                    RETURNING id
                    """, arguments: ["name": name, "now": now, "maxPlants": maxPlants])
            guard let id else {
                let taken = try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM plant WHERE name = ?)", arguments: [name])
                return taken == true ? .nameTaken : .tooManyPlants
            }
            try Self.insertSensors(sensors, plant: id, in: db)
            return .added(id: id)
        }
    }

    /// Deletes the plant, and in the same transaction its species link and care-alert state, so a
    /// new plant of the same name starts unlinked.
    public func deletePlant(name: String) async throws -> Int64? {
        try await write("deletePlant(name: \(name))") { db in
            let deleted = try Int64.fetchOne(
                db, sql: "DELETE FROM plant WHERE name = ? RETURNING id", arguments: [name])
            if deleted != nil {
                try db.execute(sql: "DELETE FROM catalog_plant_link WHERE plant = ?", arguments: [name])
            }
            return deleted
        }
    }

    /// One transaction: the row's name changes (id, sensors and created_at stay), and the species
    /// link and its alerts, kept by plant name, move with it: a link row under the new name takes
    /// the old one's species, the alerts are re-pointed, then the old link row goes.
    public func renamePlant(from old: String, to new: String) async throws -> RenamePlantOutcome {
        try await write("renamePlant(from: \(old), to: \(new))") { db in
            let arguments: StatementArguments = ["old": old, "new": new]
            if old == new {
                let id = try Int64.fetchOne(db, sql: "SELECT id FROM plant WHERE name = :old", arguments: arguments)
                return id.map { .renamed(id: $0) } ?? .notFound
            }
            let renamed = try Int64.fetchOne(
                db,
                sql: """
                    UPDATE plant SET name = :new
                    WHERE name = :old AND NOT EXISTS (SELECT 1 FROM plant WHERE name = :new)
                    RETURNING id
                    """, arguments: arguments)
            guard let renamed else {
                let taken = try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM plant WHERE name = :new)", arguments: arguments)!
                return taken ? .nameTaken : .notFound
            }
            try db.execute(
                sql: """
                    DELETE FROM catalog_plant_link WHERE plant = :new;
                    INSERT INTO catalog_plant_link (plant, symbol, linked_at)
                    SELECT :new, symbol, linked_at FROM catalog_plant_link WHERE plant = :old;
                    UPDATE catalog_alert SET plant = :new WHERE plant = :old;
                    DELETE FROM catalog_plant_link WHERE plant = :old;
                    """, arguments: arguments)
            return .renamed(id: renamed)
        }
    }

    public func plants() async throws -> [StoredPlant] {
        try await read("plants()") { db in
            let rows = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT p.id, p.name, p.created_at, s.sensor
                        FROM plant p LEFT JOIN plant_sensor s ON s.plant_id = p.id
                        ORDER BY p.id, s.position
                        """))
            var plants: [StoredPlant] = []
            for row in rows {
                let id: Int64 = row["id"]
                if plants.last?.id != id {
                    plants.append(
                        StoredPlant(
                            id: id, name: row["name"], sensors: [],
                            createdAt: Date(storeMilliseconds: row["created_at"])))
                }
                if let sensor: String = row["sensor"] { plants[plants.count - 1].sensors.append(sensor) }
            }
            return plants
        }
    }

    @discardableResult
    public func seedPlants(_ plants: [(name: String, sensors: [String])]) async throws -> Int {
        let now = Date().storeMilliseconds
        let seeds = plants.map { SeedPlant(name: $0.name, sensors: $0.sensors) }
        return try await write("seedPlants(\(seeds.count) plants)") { db in
            var added = 0
            for seed in seeds {
                let id = try Int64.fetchOne(
                    db,
                    sql: """
                        INSERT INTO plant (name, created_at) VALUES (?, ?)
                        ON CONFLICT (name) DO NOTHING
                        RETURNING id
                        """, arguments: [seed.name, now])
                guard let id else { continue }
                try Self.insertSensors(seed.sensors, plant: id, in: db)
                added += 1
            }
            return added
        }
    }

    public func sensorRecords(plant: String?) async throws -> [PlantSensorRecord]? {
        if !buffer.isIdle { await buffer.drain() }
        let view = caches.sensors.lookup(plant)
        if let answer = view.answer { return answer }
        let records = try await read("sensorRecords(plant: \(plant ?? "all"))") { db -> [PlantSensorRecord]? in
            if let plant,
                try !Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM plant WHERE name = ?)"), arguments: [plant])!
            {
                return nil
            }
            let rows = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT p.name, s.sensor, r.moisture, r.temperature, r.at
                        FROM plant p
                        JOIN plant_sensor s ON s.plant_id = p.id
                        LEFT JOIN sensor_reading r ON r.sensor = s.sensor
                        WHERE :plant IS NULL OR p.name = :plant
                        ORDER BY p.id, s.position
                        """), arguments: ["plant": plant])
            return rows.map { row in
                PlantSensorRecord(
                    plant: row["name"], sensor: row["sensor"],
                    moisture: row["moisture"], temperature: row["temperature"],
                    at: (row["at"] as Int64?).map(Date.init(storeMilliseconds:)))
            }
        }
        caches.sensors.keep(records, for: plant, readAt: view.generation)
        return records
    }

    /// Links `sensors` to a new plant in the order given, keeping a repeated sensor once.
    private static func insertSensors(_ sensors: [String], plant: Int64, in db: Database) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO plant_sensor (plant_id, position, sensor) VALUES (?, ?, ?)
                ON CONFLICT DO NOTHING
                """)
        for (position, sensor) in sensors.enumerated() {
            try statement.execute(arguments: [plant, position, sensor])
        }
    }
}

/// A plants-file entry, as a `Sendable` value for the write transaction.
private struct SeedPlant: Sendable {
    var name: String
    var sensors: [String]
}
