import Foundation
import GRDB
import TrellisCore
import TrellisStore

/// How the SQLite store commits a batch of changes written behind.
extension BufferedWrite {
    /// Replaces the probe row.
    static let probeSQL = """
        INSERT INTO store_probe (id, at, filler) VALUES (1, ?, randomblob(4096))
        ON CONFLICT (id) DO UPDATE SET at = excluded.at, filler = excluded.filler
        """

    /// Keeps a reading as the latest of its sensor unless the stored one is newer. The `WHERE` of
    /// the upsert compares times inside SQLite, so late or replayed readings never win.
    static let upsertReadingSQL = """
        INSERT INTO sensor_reading (sensor, moisture, temperature, at) VALUES (?, ?, ?, ?)
        ON CONFLICT (sensor) DO UPDATE SET
            moisture = excluded.moisture, temperature = excluded.temperature, at = excluded.at
        WHERE excluded.at >= sensor_reading.at
        """

    /// Appends a dead letter.
    static let insertDeadLetterSQL = """
        INSERT INTO dead_letter (reason, topic, payload, received_at, client_key) VALUES (?, ?, ?, ?, ?)
        """

    /// Deletes one client's letters but its newest `:quota`, found on `dead_letter_by_client`:
    /// the client's flood evicts its own letters, never another's.
    static let trimClientDeadLettersSQL = """
        DELETE FROM dead_letter
        WHERE client_key = :client AND id <= (
            SELECT id FROM dead_letter WHERE client_key = :client ORDER BY id DESC LIMIT 1 OFFSET :quota)
        """

    /// How many ids the letters span, newest to oldest, each end found on the primary key: the
    /// letters cannot be more, so while the span is within the cap the count need not be taken.
    static let deadLetterSpanSQL = """
        SELECT (SELECT max(id) FROM dead_letter) - (SELECT min(id) FROM dead_letter) + 1
        """

    /// Deletes the oldest letters beyond the newest `?`, counted rather than told from the
    /// numbers: the per-client trims leave gaps, and a range below the newest number would let a
    /// flood that moves the numbers on evict other clients' letters after all. The count reads an
    /// index, the oldest letters are walked up to the first one kept, and the delete is a rowid
    /// range; no payload is read. Run only when ``deadLetterSpanSQL`` exceeds the cap.
    static let trimDeadLettersSQL = """
        DELETE FROM dead_letter WHERE id < (
            SELECT id FROM dead_letter ORDER BY id
            LIMIT 1 OFFSET max(0, (SELECT count(*) FROM dead_letter) - ?))
        """

    /// Writes a batch inside the caller's transaction, trimming dead letters and device logs once at the end,
    /// and the records it may skip (``SparedRecords``) last, under a savepoint. Returns how many of those
    /// were skipped and why, nil when all were kept.
    static func write(
        _ batch: [BufferedWrite], deadLetterLimit: Int, in db: Database
    ) throws -> (count: Int, error: any Error)? {
        let (required, spared) = SparedRecords.split(batch)
        var trims = Trims()
        for item in required { try write(item, in: db, trims: &trims) }
        for (device, limit) in trims.deviceLogLimits {
            try DeviceLogSQL.trim(device: device, keeping: limit, in: db)
        }
        for (client, quota) in trims.deadLetterQuotas where quota < deadLetterLimit {
            try db.cachedStatement(sql: trimClientDeadLettersSQL).execute(arguments: ["client": client, "quota": quota])
        }
        if trims.deadLetters, try Int.fetchOne(db.cachedStatement(sql: deadLetterSpanSQL)) ?? 0 > deadLetterLimit {
            try db.cachedStatement(sql: trimDeadLettersSQL).execute(arguments: [deadLetterLimit])
        }
        guard !spared.isEmpty else { return nil }
        do {
            try db.inSavepoint {
                for item in spared { try write(item, in: db, trims: &trims) }
                return .commit
            }
            return nil
        } catch let error as DatabaseError where refusals.contains(error.resultCode.primaryResultCode) {
            // Rolled back to the savepoint; the transaction goes on.
            return (spared.count, error)
        }
    }

    /// The errors a spared record is skipped for (``SparedRecords``): the database refused the
    /// statement (no such table, a constraint, a trigger's `RAISE`, a mismatch, a denied access). Any
    /// other (busy, locked, read-only, full, I/O, corrupt, interrupted, cancelled) is the store's, and
    /// fails the batch.
    static let refusals: [ResultCode] = [
        .SQLITE_ERROR, .SQLITE_TOOBIG, .SQLITE_CONSTRAINT, .SQLITE_MISMATCH, .SQLITE_AUTH, .SQLITE_RANGE
    ]

    /// What a batch must trim after its writes.
    struct Trims {
        var deadLetters = false
        /// The quota of each client a letter was written for (the latest one asked).
        var deadLetterQuotas: [String: Int] = [:]
        var deviceLogLimits: [String: Int] = [:]
    }

    private static func write(_ item: BufferedWrite, in db: Database, trims: inout Trims) throws {
        switch item {
        case let .reading(sensor, moisture, temperature, at):
            try db.cachedStatement(sql: upsertReadingSQL)
                .execute(arguments: [sensor, moisture, temperature, at])
            try HistorySQL.record(sensor: sensor, moisture: moisture, temperature: temperature, at: at, in: db)
        case let .deadLetter(reason, topic, payload, at, client, quota):
            try db.cachedStatement(sql: insertDeadLetterSQL)
                .execute(arguments: [reason, topic, Data(payload), at, client])
            trims.deadLetters = true
            trims.deadLetterQuotas[client] = quota
        case let .deviceLog(device, at, type, message, limit):
            try DeviceLogSQL.append(device: device, at: at, type: type, message: message, in: db)
            trims.deviceLogLimits[device] = limit
        case let .forward(bridge, rule, topic, payload, qos, retain, at):
            try db.cachedStatement(sql: SQLiteStore.insertForwardSQL)
                .execute(arguments: [bridge, rule, topic, Data(payload), qos, retain, at])
        case let .carriedIn(bridge, origin, sequence, keep):
            try SQLiteStore.recordCarriedIn(
                bridge: bridge, origin: origin, sequence: sequence, forgettingPast: keep, in: db)
        case let .probe(at):
            try db.cachedStatement(sql: probeSQL).execute(arguments: [at])
        case let .marked(inner, mark):
            try write(inner, in: db, trims: &trims)
            try SQLiteStore.record(mark, in: db)
        }
    }
}
