import Foundation
import PostgresNIO
import TrellisCore
import TrellisStore

/// Plant links and care alerts of ``CatalogStore`` over PostgreSQL: each change is one
/// transaction whose SQL decides (upserts, conditional deletes).
///
/// Races between relays: linking first reads the plant row `FOR SHARE`, so a racing delete or
/// rename of the plant waits for the link to commit and then removes or moves it (or, when it
/// committed first, the link finds no plant and answers ``LinkOutcome/unknownPlant``). A
/// care-alert update first locks the plant's link row `FOR UPDATE`: two relays judging the same
/// plant run one after the other, so each compares with the state the other left, and an alert
/// is reported as started or cleared exactly once. Unlinking deletes the link row, which waits
/// for that lock too; the alerts go with it (`ON DELETE CASCADE`).
extension PostgresStore {
    public func linkPlant(plant: String, symbol: String, at: Date) async throws -> LinkOutcome {
        let at = at.storeMilliseconds
        let logger = self.logger
        return try await write("linkPlant(plant: \(plant), symbol: \(symbol))") { connection in
            let plantRows = try await connection.query(
                "SELECT 1 FROM plant WHERE name = \(plant) FOR SHARE", logger: logger
            ).collect()
            guard !plantRows.isEmpty else { return .unknownPlant }
            let linked = try await connection.query(
                """
                INSERT INTO catalog_plant_link (plant, symbol, linked_at)
                SELECT \(plant), \(symbol), \(at)
                WHERE EXISTS (SELECT 1 FROM species WHERE symbol = \(symbol))
                ON CONFLICT (plant) DO UPDATE SET symbol = excluded.symbol, linked_at = excluded.linked_at
                RETURNING 1
                """, logger: logger
            ).collect()
            guard !linked.isEmpty else { return .unknownSpecies }
            // Alerts were judged against the old species; the caller evaluates afresh.
            try await connection.query("DELETE FROM catalog_alert WHERE plant = \(plant)", logger: logger)
            return .linked
        }
    }

    public func unlinkPlant(plant: String) async throws -> Bool {
        let logger = self.logger
        return try await write("unlinkPlant(plant: \(plant))") { connection in
            try await !connection.query(
                "DELETE FROM catalog_plant_link WHERE plant = \(plant) RETURNING 1", logger: logger
            ).collect().isEmpty
        }
    }

    public func linkedPlants(sensor: String) async throws -> [LinkedPlant] {
        await commits.buffer.drain()
        let logger = self.logger
        return try await read("linkedPlants(sensor: \(sensor))") { connection in
            let names = try await connection.query(
                """
                SELECT l.plant FROM plant_sensor ps
                JOIN plant p ON p.id = ps.plant_id
                JOIN catalog_plant_link l ON l.plant = p.name
                WHERE ps.sensor = \(sensor) ORDER BY l.plant
                """, logger: logger
            ).decode(String.self).gathered()
            var plants: [LinkedPlant] = []
            for name in names {
                if let plant = try await Self.linkedPlant(name, on: connection, logger: logger) { plants.append(plant) }
            }
            return plants
        }
    }

    public func linkedPlant(plant: String) async throws -> LinkedPlant? {
        await commits.buffer.drain()
        let logger = self.logger
        return try await read("linkedPlant(plant: \(plant))") { connection in
            try await Self.linkedPlant(plant, on: connection, logger: logger)
        }
    }

    public func updateCareAlerts(
        plant: String, conditions: [CareCondition], at: Date,
        notifying: @escaping @Sendable (CareAlertUpdate) -> [PendingNotification]
    ) async throws -> CareAlertUpdate {
        let at = at.storeMilliseconds
        let conditions = conditions.map {
            AlertRow(sensor: $0.sensor, kind: $0.kind.rawValue, value: $0.value, limit: $0.limit)
        }
        let logger = self.logger
        return try await write("updateCareAlerts(plant: \(plant))") { connection in
            // The link row is the plant's alert state's lock (see the type's comment).
            try await connection.query(
                "SELECT 1 FROM catalog_plant_link WHERE plant = \(plant) FOR UPDATE", logger: logger)
            var changed = false
            var startedKeys: [String] = []
            for condition in conditions {
                let started = try await connection.query(
                    """
                    INSERT INTO catalog_alert (plant, sensor, kind, value, limit_value, since)
                    SELECT \(plant), \(condition.sensor), \(condition.kind), \(condition.value), \(condition.limit), \(at)
                    WHERE EXISTS (SELECT 1 FROM catalog_plant_link WHERE plant = \(plant))
                    ON CONFLICT (plant, sensor, kind) DO NOTHING
                    RETURNING 1
                    """, logger: logger
                ).collect()
                if !started.isEmpty {
                    changed = true
                    startedKeys.append(condition.kind + ":" + condition.sensor)
                } else {
                    try await connection.query(
                        """
                        UPDATE catalog_alert SET value = \(condition.value), limit_value = \(condition.limit)
                        WHERE plant = \(plant) AND sensor = \(condition.sensor) AND kind = \(condition.kind)
                        """, logger: logger)
                }
            }
            // `kind:sensor` is unambiguous: a kind is one of three words without a colon.
            let keep = conditions.map { $0.kind + ":" + $0.sensor }
            let cleared = try await connection.query(
                """
                DELETE FROM catalog_alert
                WHERE plant = \(plant) AND NOT ((kind || ':' || sensor) = ANY(\(keep)::text[]))
                RETURNING kind || ':' || sensor
                """, logger: logger)
            var clearedKeys: [String] = []
            for try await key in cleared.decode(String.self) { clearedKeys.append(key) }
            if !clearedKeys.isEmpty { changed = true }
            var alerts: [CareAlert] = []
            for try await (sensor, kind, value, limit, since)
                in (try await connection.query(
                    """
                    SELECT sensor, kind, value, limit_value, since FROM catalog_alert WHERE plant = \(plant)
                    ORDER BY sensor, CASE kind WHEN 'dry' THEN 0 WHEN 'wet' THEN 1 ELSE 2 END
                    """, logger: logger)).decode((String, String, Double, Double, Int64).self)
            {
                guard let kind = CareAlertKind(rawValue: kind) else { continue }
                alerts.append(
                    CareAlert(
                        kind: kind, sensor: sensor, value: value, limit: limit,
                        since: Date(storeMilliseconds: since)))
            }
            let update = CareAlertUpdate(
                alerts: alerts, changed: changed, started: startedKeys, cleared: clearedKeys.sorted())
            for pending in notifying(update) { _ = try await Self.enqueue(pending, on: connection, logger: logger) }
            return update
        }
    }

    /// A linked plant with its species and the latest reading of each of its sensors that reported.
    private static func linkedPlant(_ plant: String, on connection: PostgresConnection, logger: Logger) async throws
        -> LinkedPlant?
    {
        guard
            let species = try await species(
                connection.query(
                    """
                    SELECT \(unescaped: Species.storedColumns("s")) FROM catalog_plant_link l JOIN species s ON s.symbol = l.symbol
                    WHERE l.plant = \(plant)
                    """, logger: logger)
            ).first
        else { return nil }
        var readings: [CareReading] = []
        for try await (sensor, moisture, temperature)
            in (try await connection.query(
                """
                SELECT ps.sensor, r.moisture, r.temperature FROM plant p
                JOIN plant_sensor ps ON ps.plant_id = p.id
                JOIN sensor_reading r ON r.sensor = ps.sensor
                WHERE p.name = \(plant) ORDER BY ps.position
                """, logger: logger)).decode((String, Int64, Double).self)
        {
            readings.append(CareReading(sensor: sensor, moisture: Int(moisture), temperature: temperature))
        }
        return LinkedPlant(plant: plant, species: species, readings: readings)
    }
}

/// A care condition as a `Sendable` row for a write transaction.
private struct AlertRow: Sendable {
    var sensor: String
    var kind: String
    var value: Double
    var limit: Double
}
