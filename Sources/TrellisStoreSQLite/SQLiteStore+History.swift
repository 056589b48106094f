import Foundation
import GRDB
import TrellisCore
import TrellisStore

/// ``HistoryStore`` over SQLite: `reading_raw` holds each reading as it came, `reading_hourly`
/// each sensor's hours (count, and minimum, maximum and sum of each value, so a late reading adds
/// into its hour exactly and the mean is the sum over the count).
extension SQLiteStore {
    public func compactHistory(_ retention: HistoryRetention, now: Date) async throws -> HistoryCompaction {
        await buffer.drain()
        let raw = retention.rawCutoff(now: now)
        let hourly = retention.hourlyCutoff(now: now)
        let cap = max(1, retention.maxRowsPerSensor)
        return try await write("compactHistory()") { db in
            var outcome = HistoryCompaction()
            try db.execute(sql: HistorySQL.foldRaw, arguments: [raw])
            try db.execute(sql: "DELETE FROM reading_raw WHERE at < ?", arguments: [raw])
            outcome.folded = db.changesCount
            try db.execute(sql: "DELETE FROM reading_hourly WHERE hour < ?", arguments: [hourly])
            outcome.expired = db.changesCount
            for table in ["reading_raw", "reading_hourly"] {
                let time = table == "reading_raw" ? "at" : "hour"
                let crowded = try String.fetchAll(
                    db, sql: "SELECT sensor FROM \(table) GROUP BY sensor HAVING count(*) > ?", arguments: [cap])
                for sensor in crowded {
                    try db.execute(
                        sql: """
                            DELETE FROM \(table) WHERE sensor = :sensor AND rowid IN (
                                SELECT rowid FROM \(table) WHERE sensor = :sensor
                                ORDER BY \(time) DESC, rowid DESC LIMIT -1 OFFSET :cap)
                            """, arguments: ["sensor": sensor, "cap": cap])
                    outcome.dropped += db.changesCount
                }
            }
            return outcome
        }
    }

    public func history(of subject: HistorySubject, plan: HistoryPlan) async throws -> [HistoryPoint]? {
        if !buffer.isIdle { await buffer.drain() }
        return try await read("history(of: \(subject))") { db -> [HistoryPoint]? in
            let sensors: [String]
            switch subject {
            case let .sensor(sensor):
                sensors = [sensor]
            case let .plant(name):
                guard
                    try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM plant WHERE name = ?)", arguments: [name])
                        == true
                else { return nil }
                sensors = try String.fetchAll(
                    db,
                    sql: """
                        SELECT s.sensor FROM plant p JOIN plant_sensor s ON s.plant_id = p.id
                        WHERE p.name = ? ORDER BY s.position
                        """, arguments: [name])
            }
            guard !sensors.isEmpty else { return [] }
            let list = Array(repeating: "?", count: sensors.count).joined(separator: ", ")
            let bounds = [plan.origin, plan.width, plan.origin, plan.end].map(\.databaseValue)
            let hours =
                plan.resolution == .raw
                ? ""
                : """
                SELECT hour AS t, count AS n, moisture_min AS mmin, moisture_max AS mmax, moisture_sum AS msum,
                       temperature_min AS tmin, temperature_max AS tmax, temperature_sum AS tsum
                FROM reading_hourly WHERE sensor IN (\(list)) AND hour >= ? AND hour < ?
                UNION ALL
                """
            let hourArguments: [DatabaseValue] =
                plan.resolution == .raw ? [] : sensors.map(\.databaseValue) + bounds[2...]
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT (t - ?) / ? AS bucket, sum(n) AS n, min(mmin) AS mmin, max(mmax) AS mmax, sum(msum) AS msum,
                           min(tmin) AS tmin, max(tmax) AS tmax, sum(tsum) AS tsum
                    FROM (
                        \(hours)
                        SELECT at AS t, 1 AS n, moisture AS mmin, moisture AS mmax, moisture AS msum,
                               temperature AS tmin, temperature AS tmax, temperature AS tsum
                        FROM reading_raw WHERE sensor IN (\(list)) AND at >= ? AND at < ?)
                    GROUP BY bucket ORDER BY bucket LIMIT ?
                    """,
                arguments: StatementArguments(
                    Array(bounds[0...1]) + hourArguments + sensors.map(\.databaseValue) + bounds[2...]
                        + [HistoryPlan.maxPoints.databaseValue]))
            return rows.map { row in
                HistorySQL.point(
                    bucket: row["bucket"], plan: plan, count: row["n"],
                    moisture: (row["mmin"], row["mmax"], row["msum"]),
                    temperature: (row["tmin"], row["tmax"], row["tsum"]))
            }
        }
    }
}

/// The history's SQL that both the batch writer and the compaction use.
enum HistorySQL {
    /// Adds a reading into its hour's row when the hour was folded already (arguments: moisture
    /// three times, temperature three times, sensor, hour).
    static let addToFoldedHour = """
        UPDATE reading_hourly SET count = count + 1,
            moisture_min = min(moisture_min, ?), moisture_max = max(moisture_max, ?), moisture_sum = moisture_sum + ?,
            temperature_min = min(temperature_min, ?), temperature_max = max(temperature_max, ?),
            temperature_sum = temperature_sum + ?
        WHERE sensor = ? AND hour = ?
        """

    /// Keeps a reading raw unless its hour was folded (arguments: sensor, sensor, moisture,
    /// temperature, at, sensor, hour); the plant is its sensor's first plant, if any.
    static let insertRaw = """
        INSERT INTO reading_raw (sensor, plant_id, moisture, temperature, at)
        SELECT ?, (SELECT min(plant_id) FROM plant_sensor WHERE sensor = ?), ?, ?, ?
        WHERE NOT EXISTS (SELECT 1 FROM reading_hourly WHERE sensor = ? AND hour = ?)
        """

    /// Folds the raw readings older than `?` into their hours, adding into hours folded before.
    static let foldRaw = """
        INSERT INTO reading_hourly (sensor, hour, count, moisture_min, moisture_max, moisture_sum,
                                    temperature_min, temperature_max, temperature_sum)
        SELECT sensor, at - at % 3600000 AS h, count(*), min(moisture), max(moisture), sum(moisture),
               min(temperature), max(temperature), sum(temperature)
        FROM reading_raw WHERE at < ? GROUP BY sensor, h
        ON CONFLICT (sensor, hour) DO UPDATE SET count = count + excluded.count,
            moisture_min = min(moisture_min, excluded.moisture_min),
            moisture_max = max(moisture_max, excluded.moisture_max),
            moisture_sum = moisture_sum + excluded.moisture_sum,
            temperature_min = min(temperature_min, excluded.temperature_min),
            temperature_max = max(temperature_max, excluded.temperature_max),
            temperature_sum = temperature_sum + excluded.temperature_sum
        """

    /// Writes one reading into the history inside the caller's transaction.
    static func record(sensor: String, moisture: Int, temperature: Double, at: Int64, in db: Database) throws {
        let hour = HistoryPlan.hourStart(at)
        try db.cachedStatement(sql: addToFoldedHour).execute(
            arguments: [moisture, moisture, moisture, temperature, temperature, temperature, sensor, hour])
        try db.cachedStatement(sql: insertRaw).execute(
            arguments: [sensor, sensor, moisture, temperature, at, sensor, hour])
    }

    /// One answer's point from its bucket's aggregates.
    static func point(
        bucket: Int64, plan: HistoryPlan, count: Int, moisture: (Int, Int, Double),
        temperature: (Double, Double, Double)
    ) -> HistoryPoint {
        HistoryPoint(
            at: Date(storeMilliseconds: plan.origin + bucket * plan.width), count: count,
            moistureMin: moisture.0, moistureMean: moisture.2 / Double(count), moistureMax: moisture.1,
            temperatureMin: temperature.0, temperatureMean: temperature.2 / Double(count), temperatureMax: temperature.1
        )
    }

    /// The history's tables: raw readings found by sensor and time (and by time, to fold them),
    /// hours keyed by sensor and hour (and found by hour, to delete them).
    static func createTables(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE reading_raw (
                    id INTEGER PRIMARY KEY,
                    sensor TEXT NOT NULL,
                    plant_id INTEGER,
                    moisture INTEGER NOT NULL,
                    temperature REAL NOT NULL,
                    at INTEGER NOT NULL
                ) STRICT;
                CREATE INDEX reading_raw_by_sensor ON reading_raw(sensor, at);
                CREATE INDEX reading_raw_by_time ON reading_raw(at);

                CREATE TABLE reading_hourly (
                    sensor TEXT NOT NULL,
                    hour INTEGER NOT NULL,
                    count INTEGER NOT NULL,
                    moisture_min INTEGER NOT NULL,
                    moisture_max INTEGER NOT NULL,
                    moisture_sum INTEGER NOT NULL,
                    temperature_min REAL NOT NULL,
                    temperature_max REAL NOT NULL,
                    temperature_sum REAL NOT NULL,
                    PRIMARY KEY (sensor, hour)
                ) STRICT;
                CREATE INDEX reading_hourly_by_hour ON reading_hourly(hour);
                """)
    }
}
