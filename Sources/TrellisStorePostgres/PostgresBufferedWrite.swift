import Foundation
import Logging
import PostgresNIO
import TrellisCore
import TrellisStore

/// How the PostgreSQL store commits a batch of ``BufferedWrite`` (inside the caller's transaction)
/// and records delivery marks, the SQL twins of the SQLite store's.
enum PostgresBufferedWrite {
    /// Writes a batch, trimming dead letters and device logs once at the end, and the records it may
    /// skip (``SparedRecords``) last, under a savepoint. Returns how many of those were skipped and
    /// why, nil when all were kept.
    static func write(
        _ batch: [BufferedWrite], owner: String, deadLetterLimit: Int,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> (count: Int, error: any Error)? {
        let (required, spared) = SparedRecords.split(batch)
        var trimDeadLetters = false
        var deviceLogLimits: [String: Int] = [:]
        var deadLetterQuotas: [String: Int] = [:]
        for item in required {
            try await write(
                item, owner: owner, on: connection, logger: logger, trimDeadLetters: &trimDeadLetters,
                deadLetterQuotas: &deadLetterQuotas, deviceLogLimits: &deviceLogLimits)
        }
        for (device, limit) in deviceLogLimits.sorted(by: { $0.key < $1.key }) {
            try await PostgresDeviceLog.trim(device: device, keeping: limit, on: connection, logger: logger)
        }
        // One client's letters beyond its quota, found on `dead_letter_by_client`: a client's flood
        // evicts its own letters, never another's.
        for (client, quota) in deadLetterQuotas.sorted(by: { $0.key < $1.key }) where quota < deadLetterLimit {
            let offset = Int64(quota)
            try await connection.query(
                """
                DELETE FROM dead_letter
                WHERE client_key = \(client) AND id <= (
                    SELECT id FROM dead_letter WHERE client_key = \(client) ORDER BY id DESC LIMIT 1 OFFSET \(offset))
                """, logger: logger)
        }
        if trimDeadLetters {
            // The oldest letters beyond the newest `deadLetterLimit`, counted rather than told from the
            // numbers: the per-client trims leave gaps, and a range below the newest number would let
            // a flood that moves the numbers on evict other clients' letters after all. The count is
            // taken only when the ids span more than the cap (both ends found on the primary key).
            let limit = Int64(deadLetterLimit)
            try await connection.query(
                """
                DELETE FROM dead_letter
                WHERE (SELECT max(id) FROM dead_letter) - (SELECT min(id) FROM dead_letter) >= \(limit)
                  AND id < (SELECT id FROM dead_letter ORDER BY id
                            OFFSET greatest(0, (SELECT count(*) FROM dead_letter) - \(limit)) LIMIT 1)
                """, logger: logger)
        }
        guard !spared.isEmpty else { return nil }
        try await connection.query("SAVEPOINT spared", logger: logger)
        do {
            for item in spared {
                try await write(
                    item, owner: owner, on: connection, logger: logger, trimDeadLetters: &trimDeadLetters,
                    deadLetterQuotas: &deadLetterQuotas, deviceLogLimits: &deviceLogLimits)
            }
            // Released by the COMMIT: a RELEASE would be one more round trip.
            return nil
        } catch let error as PSQLError where isRefusal(error) {
            try await connection.query("ROLLBACK TO SAVEPOINT spared", logger: logger)
            return (spared.count, error)
        }
    }

    /// Whether the server refused a spared record's statement (``SparedRecords``): a missing table
    /// or a denied right (class 42), a constraint (23), bad data (22), a trigger's exception (P0).
    /// Any other error (a lost connection, a full disk, a deadlock, a cancellation, a server
    /// shutting down) is the store's, and fails the batch.
    static func isRefusal(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return ["42", "23", "22", "P0"].contains(String(state.prefix(2)))
    }

    private static func write(
        _ item: BufferedWrite, owner: String, on connection: PostgresConnection, logger: Logger,
        trimDeadLetters: inout Bool, deadLetterQuotas: inout [String: Int],
        deviceLogLimits: inout [String: Int]
    ) async throws {
        switch item {
        case let .reading(sensor, moisture, temperature, at):
            // The WHERE of the upsert compares times inside PostgreSQL: late or replayed readings never win.
            try await connection.query(
                """
                INSERT INTO sensor_reading (sensor, moisture, temperature, at)
                VALUES (\(sensor), \(Int64(moisture)), \(temperature), \(at))
                ON CONFLICT (sensor) DO UPDATE SET
                    moisture = excluded.moisture, temperature = excluded.temperature, at = excluded.at
                WHERE excluded.at >= sensor_reading.at
                """, logger: logger)
            // Into the history: raw, naming the sensor's first plant, or into its hour when that was folded.
            let hour = HistoryPlan.hourStart(at)
            try await connection.query(
                """
                WITH folded AS (
                    UPDATE reading_hourly SET count = count + 1,
                        moisture_min = least(moisture_min, \(Int64(moisture))),
                        moisture_max = greatest(moisture_max, \(Int64(moisture))),
                        moisture_sum = moisture_sum + \(Int64(moisture)),
                        temperature_min = least(temperature_min, \(temperature)),
                        temperature_max = greatest(temperature_max, \(temperature)),
                        temperature_sum = temperature_sum + \(temperature)
                    WHERE sensor = \(sensor) AND hour = \(hour)
                    RETURNING 1)
                INSERT INTO reading_raw (sensor, plant_id, moisture, temperature, at)
                SELECT \(sensor), (SELECT min(plant_id) FROM plant_sensor WHERE sensor = \(sensor)),
                       \(Int64(moisture)), \(temperature), \(at)
                WHERE NOT EXISTS (SELECT 1 FROM folded)
                """, logger: logger)
        case let .deadLetter(reason, topic, payload, at, client, quota):
            try await connection.query(
                """
                INSERT INTO dead_letter (reason, topic, payload, received_at, client_key)
                VALUES (\(reason), \(topic), \(Data(payload)), \(at), \(client))
                """, logger: logger)
            trimDeadLetters = true
            deadLetterQuotas[client] = quota
        case let .deviceLog(device, at, type, message, limit):
            try await PostgresDeviceLog.append(
                device: device, at: at, type: type, message: message,
                on: connection, logger: logger)
            deviceLogLimits[device] = limit
        case let .forward(bridge, rule, topic, payload, qos, retain, at):
            try await connection.query(
                """
                INSERT INTO bridge_queue (bridge, rule, topic, payload, qos, retain, stored_at)
                VALUES (\(bridge), \(rule), \(topic), \(Data(payload)), \(Int32(qos)), \(retain), \(at))
                """, logger: logger)
        case let .carriedIn(bridge, origin, sequence, keep):
            try await PostgresStore.recordCarriedIn(
                bridge: bridge, origin: origin, sequence: sequence, forgettingPast: keep, on: connection,
                logger: logger)
        case let .probe(at):
            // 4 KiB of fresh bytes per relay, so the probe's commit writes as a real change does.
            try await connection.query(
                """
                INSERT INTO store_probe (owner, at, filler)
                VALUES (\(owner), \(at), decode(repeat(md5(random()::text), 256), 'hex'))
                ON CONFLICT (owner) DO UPDATE SET at = excluded.at, filler = excluded.filler
                """, logger: logger)
        case let .marked(inner, mark):
            try await write(
                inner, owner: owner, on: connection, logger: logger, trimDeadLetters: &trimDeadLetters,
                deadLetterQuotas: &deadLetterQuotas, deviceLogLimits: &deviceLogLimits)
            try await record(mark, owner: owner, on: connection, logger: logger)
        }
    }

    /// Records `mark` as `owner`'s latest delivery handled, replacing an older row for its identifier, and
    /// returns the id of the transaction (which the write has just given one), in the same round trip: a write
    /// that records a mark needs no statement of its own for it (``UnresolvedCommit``).
    @discardableResult
    static func record(_ mark: DeliveryMark, owner: String, on connection: PostgresConnection, logger: Logger)
        async throws -> String?
    {
        let rows = try await connection.query(
            """
            INSERT INTO delivery (owner, packet_id, fingerprint, seq)
            VALUES (\(owner), \(Int32(mark.packetID)), \(Int64(bitPattern: mark.fingerprint)), nextval('delivery_seq'))
            ON CONFLICT (owner, packet_id) DO UPDATE SET fingerprint = excluded.fingerprint, seq = excluded.seq
            RETURNING pg_current_xact_id()::text
            """, logger: logger)
        for try await transaction in rows.decode(String.self) { return transaction }
        return nil
    }
}
