import Foundation
import Logging
import PostgresNIO
import TrellisCore
import TrellisStore

/// ``HistoryStore`` over PostgreSQL, the twin of the SQLite store's. Folding is one statement
/// (the raw rows deleted and their hours written from what the delete returned), so a reading
/// committed by another relay meanwhile is either folded or left raw, never lost; relays
/// compacting at once fold each row once, as the second delete skips the rows the first removed.
extension PostgresStore {
    public func compactHistory(_ retention: HistoryRetention, now: Date) async throws -> HistoryCompaction {
        await commits.buffer.drain()
        let raw = retention.rawCutoff(now: now)
        let hourly = retention.hourlyCutoff(now: now)
        let cap = Int64(max(1, retention.maxRowsPerSensor))
        let logger = self.logger
        return try await write("compactHistory()") { connection in
            var outcome = HistoryCompaction()
            outcome.folded = try await Self.count(
                """
                WITH moved AS (DELETE FROM reading_raw WHERE at < \(raw) RETURNING sensor, at, moisture, temperature),
                folded AS (
                    INSERT INTO reading_hourly (sensor, hour, count, moisture_min, moisture_max, moisture_sum,
                                                temperature_min, temperature_max, temperature_sum)
                    SELECT sensor, at - at % 3600000, count(*), min(moisture), max(moisture), sum(moisture)::bigint,
                           min(temperature), max(temperature), sum(temperature)
                    FROM moved GROUP BY 1, 2
                    ON CONFLICT (sensor, hour) DO UPDATE SET count = reading_hourly.count + excluded.count,
                        moisture_min = least(reading_hourly.moisture_min, excluded.moisture_min),
                        moisture_max = greatest(reading_hourly.moisture_max, excluded.moisture_max),
                        moisture_sum = reading_hourly.moisture_sum + excluded.moisture_sum,
                        temperature_min = least(reading_hourly.temperature_min, excluded.temperature_min),
                        temperature_max = greatest(reading_hourly.temperature_max, excluded.temperature_max),
                        temperature_sum = reading_hourly.temperature_sum + excluded.temperature_sum
                    RETURNING 1)
                SELECT count(*) FROM moved
                """, on: connection, logger: logger)
            outcome.expired = try await Self.count(
                "WITH gone AS (DELETE FROM reading_hourly WHERE hour < \(hourly) RETURNING 1) SELECT count(*) FROM gone",
                on: connection, logger: logger)
            for sensor in try await Self.crowded("reading_raw", cap: cap, on: connection, logger: logger) {
                outcome.dropped += try await Self.count(
                    """
                    WITH gone AS (
                        DELETE FROM reading_raw WHERE id IN (
                            SELECT id FROM reading_raw WHERE sensor = \(sensor) ORDER BY at DESC, id DESC OFFSET \(cap))
                        RETURNING 1)
                    SELECT count(*) FROM gone
                    """, on: connection, logger: logger)
            }
            for sensor in try await Self.crowded("reading_hourly", cap: cap, on: connection, logger: logger) {
                outcome.dropped += try await Self.count(
                    """
                    WITH gone AS (
                        DELETE FROM reading_hourly WHERE sensor = \(sensor) AND hour IN (
                            SELECT hour FROM reading_hourly WHERE sensor = \(sensor) ORDER BY hour DESC OFFSET \(cap))
                        RETURNING 1)
                    SELECT count(*) FROM gone
                    """, on: connection, logger: logger)
            }
            return outcome
        }
    }

    public func history(of subject: HistorySubject, plan: HistoryPlan) async throws -> [HistoryPoint]? {
        if !commits.buffer.isIdle { await commits.buffer.drain() }
        let logger = self.logger
        return try await read("history(of: \(subject))") { connection -> [HistoryPoint]? in
            var sensors: [String] = []
            switch subject {
            case let .sensor(sensor):
                sensors = [sensor]
            case let .plant(name):
                var exists = false
                for try await (found, sensor) in try await connection.query(
                    """
                    SELECT p.id, s.sensor FROM plant p LEFT JOIN plant_sensor s ON s.plant_id = p.id
                    WHERE p.name = \(name) ORDER BY s.position
                    """, logger: logger
                ).decode((Int64, String?).self) {
                    _ = found
                    exists = true
                    if let sensor { sensors.append(sensor) }
                }
                guard exists else { return nil }
            }
            guard !sensors.isEmpty else { return [] }
            let hours = plan.resolution == .hourly
            let rows = try await connection.query(
                """
                SELECT (t - \(plan.origin)) / \(plan.width) AS bucket, sum(n)::bigint, min(mmin), max(mmax),
                       sum(msum)::double precision, min(tmin), max(tmax), sum(tsum)
                FROM (
                    SELECT hour AS t, count AS n, moisture_min AS mmin, moisture_max AS mmax, moisture_sum AS msum,
                           temperature_min AS tmin, temperature_max AS tmax, temperature_sum AS tsum
                    FROM reading_hourly
                    WHERE \(hours) AND sensor = ANY(\(sensors)) AND hour >= \(plan.origin) AND hour < \(plan.end)
                    UNION ALL
                    SELECT at, 1, moisture, moisture, moisture, temperature, temperature, temperature
                    FROM reading_raw WHERE sensor = ANY(\(sensors)) AND at >= \(plan.origin) AND at < \(plan.end)) AS r
                GROUP BY bucket ORDER BY bucket LIMIT \(HistoryPlan.maxPoints)
                """, logger: logger)
            var points: [HistoryPoint] = []
            for try await (bucket, count, mmin, mmax, msum, tmin, tmax, tsum)
                in rows.decode((Int64, Int64, Int64, Int64, Double, Double, Double, Double).self)
            {
                points.append(
                    HistoryPoint(
                        at: Date(storeMilliseconds: plan.origin + bucket * plan.width), count: Int(count),
                        moistureMin: Int(mmin), moistureMean: msum / Double(count), moistureMax: Int(mmax),
                        temperatureMin: tmin, temperatureMean: tsum / Double(count), temperatureMax: tmax))
            }
            return points
        }
    }

    /// The one number `query` answers.
    static func count(_ query: PostgresQuery, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        var total: Int64 = 0
        for try await value in try await connection.query(query, logger: logger).decode(Int64.self) { total = value }
        return Int(total)
    }

    /// The sensors with more than `cap` rows in `table` (a constant of this file).
    static func crowded(_ table: String, cap: Int64, on connection: PostgresConnection, logger: Logger)
        async throws -> [String]
    {
        var sensors: [String] = []
        var query = PostgresQuery(unsafeSQL: "SELECT sensor FROM \(table) GROUP BY sensor HAVING count(*) > $1")
        query.binds.append(cap)
        for try await sensor in try await connection.query(query, logger: logger).decode(String.self) {
            sensors.append(sensor)
        }
        return sensors
    }

    /// The history's tables, as ``StoreSchema`` creates them in SQLite.
    static let readingHistory = [
        """
        CREATE TABLE reading_raw (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            sensor text COLLATE "C" NOT NULL,
            plant_id bigint,
            moisture bigint NOT NULL,
            temperature double precision NOT NULL,
            at bigint NOT NULL)
        """,
        "CREATE INDEX reading_raw_by_sensor ON reading_raw(sensor, at)",
        "CREATE INDEX reading_raw_by_time ON reading_raw(at)",
        """
        CREATE TABLE reading_hourly (
            sensor text COLLATE "C" NOT NULL,
            hour bigint NOT NULL,
            count bigint NOT NULL,
            moisture_min bigint NOT NULL,
            moisture_max bigint NOT NULL,
            moisture_sum bigint NOT NULL,
            temperature_min double precision NOT NULL,
            temperature_max double precision NOT NULL,
            temperature_sum double precision NOT NULL,
            PRIMARY KEY (sensor, hour))
        """,
        "CREATE INDEX reading_hourly_by_hour ON reading_hourly(hour)"
    ]
}
