import Foundation
import GRDB
import TrellisCore
import TrellisStore

/// Plant links and care alerts of ``CatalogStore`` over SQLite: each change is one write
/// transaction whose SQL decides (upserts, conditional updates).
extension SQLiteStore {
    public func linkPlant(plant: String, symbol: String, at: Date) async throws -> LinkOutcome {
        let arguments: StatementArguments = ["plant": plant, "symbol": symbol, "at": at.storeMilliseconds]
        return try await write("linkPlant(plant: \(plant), symbol: \(symbol))") { db in
            try db.execute(
                sql: """
                    INSERT INTO catalog_plant_link (plant, symbol, linked_at)
                    SELECT :plant, :symbol, :at
                    WHERE EXISTS (SELECT 1 FROM plant WHERE name = :plant)
                      AND EXISTS (SELECT 1 FROM species WHERE symbol = :symbol)
                    ON CONFLICT (plant) DO UPDATE SET symbol = excluded.symbol, linked_at = excluded.linked_at
                    """, arguments: arguments)
            if db.changesCount > 0 {
                // Alerts were judged against the old species; the caller evaluates afresh.
                try db.execute(sql: "DELETE FROM catalog_alert WHERE plant = :plant", arguments: arguments)
                return .linked
            }
            let plantExists = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM plant WHERE name = :plant)",
                arguments: arguments)!
            return plantExists ? .unknownSpecies : .unknownPlant
        }
    }

    public func unlinkPlant(plant: String) async throws -> Bool {
        try await write("unlinkPlant(plant: \(plant))") { db in
            try db.execute(sql: "DELETE FROM catalog_plant_link WHERE plant = ?", arguments: [plant])
            return db.changesCount > 0
        }
    }

    public func linkedPlants(sensor: String) async throws -> [LinkedPlant] {
        await buffer.drain()
        return try await read("linkedPlants(sensor: \(sensor))") { db in
            let names = try String.fetchAll(
                db,
                sql: """
                    SELECT l.plant FROM plant_sensor ps
                    JOIN plant p ON p.id = ps.plant_id
                    JOIN catalog_plant_link l ON l.plant = p.name
                    WHERE ps.sensor = ? ORDER BY l.plant
                    """, arguments: [sensor])
            return try names.compactMap { try Self.linkedPlant($0, in: db) }
        }
    }

    public func linkedPlant(plant: String) async throws -> LinkedPlant? {
        await buffer.drain()
        return try await read("linkedPlant(plant: \(plant))") { db in try Self.linkedPlant(plant, in: db) }
    }

    public func updateCareAlerts(
        plant: String, conditions: [CareCondition], at: Date,
        notifying: @escaping @Sendable (CareAlertUpdate) -> [PendingNotification]
    ) async throws -> CareAlertUpdate {
        let at = at.storeMilliseconds
        let conditions = conditions.map {
            AlertRow(sensor: $0.sensor, kind: $0.kind.rawValue, value: $0.value, limit: $0.limit)
        }
        return try await write("updateCareAlerts(plant: \(plant))") { db in
            var changed = false
            var started: [String] = []
            let start = try db.cachedStatement(
                sql: """
                    INSERT INTO catalog_alert (plant, sensor, kind, value, limit_value, since)
                    SELECT :plant, :sensor, :kind, :value, :limit, :at
                    WHERE EXISTS (SELECT 1 FROM catalog_plant_link WHERE plant = :plant)
                    ON CONFLICT (plant, sensor, kind) DO NOTHING
                    """)
            let refresh = try db.cachedStatement(
                sql: """
                    UPDATE catalog_alert SET value = :value, limit_value = :limit
                    WHERE plant = :plant AND sensor = :sensor AND kind = :kind
                    """)
            for condition in conditions {
                let arguments: StatementArguments = [
                    "plant": plant, "sensor": condition.sensor, "kind": condition.kind,
                    "value": condition.value, "limit": condition.limit, "at": at
                ]
                try start.execute(arguments: arguments)
                if db.changesCount > 0 {
                    changed = true
                    started.append(condition.kind + ":" + condition.sensor)
                } else {
                    try refresh.execute(arguments: arguments)
                }
            }
            // `kind:sensor` is unambiguous: a kind is one of three words without a colon.
            let keep = conditions.map { $0.kind + ":" + $0.sensor }
            var arguments: StatementArguments = [plant]
            var sql = "DELETE FROM catalog_alert WHERE plant = ?"
            if !keep.isEmpty {
                sql +=
                    " AND (kind || ':' || sensor) NOT IN (\(Array(repeating: "?", count: keep.count).joined(separator: ", ")))"
                arguments += StatementArguments(keep)
            }
            let cleared = try String.fetchAll(db, sql: sql + " RETURNING kind || ':' || sensor", arguments: arguments)
                .sorted()
            if !cleared.isEmpty { changed = true }
            let alerts = try Row.fetchAll(
                db,
                sql: """
                    SELECT sensor, kind, value, limit_value, since FROM catalog_alert WHERE plant = ?
                    ORDER BY sensor, CASE kind WHEN 'dry' THEN 0 WHEN 'wet' THEN 1 ELSE 2 END
                    """, arguments: [plant]
            ).compactMap { row -> CareAlert? in
                guard let kind = CareAlertKind(rawValue: row["kind"]) else { return nil }
                return CareAlert(
                    kind: kind, sensor: row["sensor"], value: row["value"], limit: row["limit_value"],
                    since: Date(storeMilliseconds: row["since"]))
            }
            let update = CareAlertUpdate(alerts: alerts, changed: changed, started: started, cleared: cleared)
            for pending in notifying(update) { _ = try Self.enqueue(pending, in: db) }
            return update
        }
    }

    private static func linkedPlant(_ plant: String, in db: Database) throws -> LinkedPlant? {
        guard
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT \(Species.storedColumns("s")) FROM catalog_plant_link l JOIN species s ON s.symbol = l.symbol
                    WHERE l.plant = ?
                    """, arguments: [plant])
        else { return nil }
        let readings = try Row.fetchAll(
            db,
            sql: """
                SELECT ps.sensor, r.moisture, r.temperature FROM plant p
                JOIN plant_sensor ps ON ps.plant_id = p.id
                JOIN sensor_reading r ON r.sensor = ps.sensor
                WHERE p.name = ? ORDER BY ps.position
                """, arguments: [plant]
        ).map { row in
            CareReading(sensor: row["sensor"], moisture: row["moisture"], temperature: row["temperature"])
        }
        return LinkedPlant(plant: plant, species: species(from: row), readings: readings)
    }
}

/// A care condition as a `Sendable` row for a write transaction.
private struct AlertRow: Sendable {
    var sensor: String
    var kind: String
    var value: Double
    var limit: Double
}
