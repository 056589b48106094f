import Foundation
import PostgresNIO
import TrellisCore
import TrellisStore

/// ``PlantStore`` over PostgreSQL: plant changes are single transactions, readings are written behind.
///
/// Unique names are the `plant.name` constraint's job (`ON CONFLICT DO NOTHING`); an add first
/// checks the name (`NOT EXISTS`), so a refused add draws no id and the plant ids (the browse
/// keys) follow SQLite's, where a refused add leaves no gap and a seed of a taken name does. The plant limit
/// spans rows, so under READ COMMITTED two relays could each count 6 of 7 and both add: an add
/// first takes ``plantLimitLock``, a transaction-scoped advisory lock, so adds count one at a time.
extension PostgresStore {
    /// The advisory lock key adds take before counting plants.
    static let plantLimitLock: Int64 = 0x706c_616e_7473

    public func addPlant(name: String, sensors: [String], maxPlants: Int) async throws -> AddPlantOutcome {
        let now = Date().storeMilliseconds
        let logger = self.logger
        return try await write("addPlant(name: \(name))") { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.plantLimitLock))", logger: logger)
            let inserted = try await connection.values(
                """
                INSERT INTO plant (name, created_at)
                SELECT \(name), \(now)
                WHERE NOT EXISTS (SELECT 1 FROM plant WHERE name = \(name))
                  AND (SELECT count(*) FROM plant) < \(Int64(maxPlants))
                ON CONFLICT (name) DO NOTHING
                RETURNING id
                """, as: Int64.self, logger: logger)
            guard let id = inserted.first else {
                let taken = try await connection.values(
                    "SELECT EXISTS (SELECT 1 FROM plant WHERE name = \(name))", as: Bool.self, logger: logger)
                return taken.first == true ? .nameTaken : .tooManyPlants
            }
            try await Self.insertSensors(sensors, plant: id, on: connection, logger: logger)
            return .added(id: id)
        }
    }

    /// Deletes the plant and, in the same transaction, its species link and care-alert state.
    public func deletePlant(name: String) async throws -> Int64? {
        let logger = self.logger
        return try await write("deletePlant(name: \(name))") { connection in
            let deleted = try await connection.values(
                "DELETE FROM plant WHERE name = \(name) RETURNING id", as: Int64.self, logger: logger)
            guard let id = deleted.first else { return nil }
            try await connection.query("DELETE FROM catalog_plant_link WHERE plant = \(name)", logger: logger)
            return id
        }
    }

    /// One transaction: the row's name changes (id, sensors and created_at stay); the species link
    /// and its alerts move with it. A racing add or rename of the new name loses to the unique
    /// constraint, which is read here as ``RenamePlantOutcome/nameTaken``.
    public func renamePlant(from old: String, to new: String) async throws -> RenamePlantOutcome {
        let logger = self.logger
        return try await write("renamePlant(from: \(old), to: \(new))") { connection in
            if old == new {
                let id = try await connection.values(
                    "SELECT id FROM plant WHERE name = \(old)", as: Int64.self, logger: logger)
                return id.first.map { .renamed(id: $0) } ?? .notFound
            }
            let taken = try await connection.values(
                "SELECT EXISTS (SELECT 1 FROM plant WHERE name = \(new))", as: Bool.self, logger: logger)
            if taken.first == true { return .nameTaken }
            let renamed: [Int64]
            do {
                try await connection.query("SAVEPOINT rename", logger: logger)
                renamed = try await connection.values(
                    "UPDATE plant SET name = \(new) WHERE name = \(old) RETURNING id", as: Int64.self, logger: logger)
                try await connection.query("RELEASE SAVEPOINT rename", logger: logger)
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
                try await connection.query("ROLLBACK TO SAVEPOINT rename", logger: logger)
                return .nameTaken
            }
            guard let id = renamed.first else { return .notFound }
            try await connection.query("DELETE FROM catalog_plant_link WHERE plant = \(new)", logger: logger)
            try await connection.query(
                """
                INSERT INTO catalog_plant_link (plant, symbol, linked_at)
                SELECT \(new), symbol, linked_at FROM catalog_plant_link WHERE plant = \(old)
                """, logger: logger)
            try await connection.query("UPDATE catalog_alert SET plant = \(new) WHERE plant = \(old)", logger: logger)
            try await connection.query("DELETE FROM catalog_plant_link WHERE plant = \(old)", logger: logger)
            return .renamed(id: id)
        }
    }

    public func plants() async throws -> [StoredPlant] {
        let (generation, kept) = PostgresReadCache.lookup(true, in: readCache.plants)
        if let kept { return kept }
        let logger = self.logger
        // The version and the rows in one statement (one snapshot): the row of trellis_version
        // LEFT JOIN every plant, so an empty table still gives the version.
        let read = try await read("plants()") { connection in
            let rows = try await connection.query(
                """
                SELECT v.version, p.id, p.name, p.created_at, s.sensor
                FROM trellis_version v
                LEFT JOIN (plant p LEFT JOIN plant_sensor s ON s.plant_id = p.id) ON true
                WHERE v.name = 'plants'
                ORDER BY p.id, s.position
                """, logger: logger)
            var version: Int64 = 0
            var plants: [StoredPlant] = []
            for try await (seen, id, name, createdAt, sensor) in rows.decode(
                (Int64, Int64?, String?, Int64?, String?).self)
            {
                version = seen
                guard let id, let name, let createdAt else { continue }
                if plants.last?.id != id {
                    plants.append(
                        StoredPlant(id: id, name: name, sensors: [], createdAt: Date(storeMilliseconds: createdAt)))
                }
                if let sensor { plants[plants.count - 1].sensors.append(sensor) }
            }
            return PostgresReadCache.Tagged(version: version, value: plants)
        }
        readCache.plants.keep(read, for: true, readAt: generation)
        return read.value
    }

    @discardableResult
    public func seedPlants(_ plants: [(name: String, sensors: [String])]) async throws -> Int {
        let now = Date().storeMilliseconds
        let seeds = plants.map { PlantSeed(name: $0.name, sensors: $0.sensors) }
        let logger = self.logger
        return try await write("seedPlants(\(seeds.count) plants)") { connection in
            var added = 0
            for seed in seeds {
                let inserted = try await connection.values(
                    """
                    INSERT INTO plant (name, created_at) VALUES (\(seed.name), \(now))
                    ON CONFLICT (name) DO NOTHING
                    RETURNING id
                    """, as: Int64.self, logger: logger)
                guard let id = inserted.first else { continue }
                try await Self.insertSensors(seed.sensors, plant: id, on: connection, logger: logger)
                added += 1
            }
            return added
        }
    }

    public func sensorRecords(plant: String?) async throws -> [PlantSensorRecord]? {
        if !commits.buffer.isIdle { await commits.buffer.drain() }
        let (generation, kept) = PostgresReadCache.lookup(plant, in: readCache.sensors)
        if let kept { return kept }
        let logger = self.logger
        // One round trip and one snapshot: the version row LEFT JOIN the plants (those named, or all)
        // LEFT JOIN their sensors, so a named plant without sensors still gives a row (it exists)
        // whose sensor is NULL, and no plant at all gives the version alone.
        let read = try await read("sensorRecords(plant: \(plant ?? "all"))") { connection in
            let rows = try await connection.query(
                """
                SELECT v.version, p.name, s.sensor, r.moisture, r.temperature, r.at
                FROM trellis_version v
                LEFT JOIN (plant p
                           LEFT JOIN plant_sensor s ON s.plant_id = p.id
                           LEFT JOIN sensor_reading r ON r.sensor = s.sensor)
                       ON \(plant)::text IS NULL OR p.name = \(plant)
                WHERE v.name = 'plants'
                ORDER BY p.id, s.position
                """, logger: logger)
            var version: Int64 = 0
            var found = false
            var records: [PlantSensorRecord] = []
            for try await (seen, name, sensor, moisture, temperature, at)
                in rows.decode((Int64, String?, String?, Int64?, Double?, Int64?).self)
            {
                version = seen
                guard let name else { continue }
                found = true
                guard let sensor else { continue }
                records.append(
                    PlantSensorRecord(
                        plant: name, sensor: sensor, moisture: moisture.map(Int.init),
                        temperature: temperature, at: at.map(Date.init(storeMilliseconds:))))
            }
            return PostgresReadCache.Tagged(version: version, value: plant != nil && !found ? nil : records)
        }
        readCache.sensors.keep(read, for: plant, readAt: generation)
        return read.value
    }

    /// Links `sensors` to a new plant in the order given, keeping a repeated sensor once.
    static func insertSensors(_ sensors: [String], plant: Int64, on connection: PostgresConnection, logger: Logger)
        async throws
    {
        for (position, sensor) in sensors.enumerated() {
            try await connection.query(
                """
                INSERT INTO plant_sensor (plant_id, position, sensor) VALUES (\(plant), \(Int32(position)), \(sensor))
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
    }
}

/// A plants-file entry, as a `Sendable` value for the write transaction.
private struct PlantSeed: Sendable {
    var name: String
    var sensors: [String]
}
