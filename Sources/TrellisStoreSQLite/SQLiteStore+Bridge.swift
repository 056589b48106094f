import Foundation
import GRDB
import TrellisCore
import TrellisStore

/// ``BridgeStore`` over SQLite: one table, its rows in the order they were kept (written behind,
/// ``BufferedCommitsStore/enqueueForward(bridge:rule:topic:payload:qos:retain:at:)``).
extension SQLiteStore {
    /// A message kept in a bridge's queue, in a batch of the write-behind.
    static let insertForwardSQL = """
        INSERT INTO bridge_queue (bridge, rule, topic, payload, qos, retain, stored_at)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        """

    public func forwards(bridge: String, after id: Int64, limit: Int) async throws -> [ForwardWindow.Message] {
        try await read("forwards(bridge: \(bridge), after: \(id))") { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT id, topic, payload, qos, retain FROM bridge_queue
                        WHERE bridge = ? AND id > ? ORDER BY id LIMIT ?
                        """), arguments: [bridge, id, limit]
            ).map { row in
                // By index: a column looked up by name is matched without case, a string lowercased per row.
                ForwardWindow.Message(
                    id: row[0], topic: row[1], payload: [UInt8](row[2] as Data), qos: row[3], retain: row[4])
            }
        }
    }

    public func deleteForwards(bridge: String, ids: [Int64]) async throws {
        guard !ids.isEmpty else { return }
        try await write("deleteForwards(bridge: \(bridge), \(ids.count) ids)") { db in
            // Parsed once per connection: a drain deletes tens of thousands.
            let delete = try db.cachedStatement(sql: "DELETE FROM bridge_queue WHERE bridge = ? AND id = ?")
            for id in ids { try delete.execute(arguments: [bridge, id]) }
        }
    }

    public func trimForwards(
        bridge: String, maxBytes: Int, storedBefore: Date, sparing spared: [Int64]
    ) async throws -> ForwardTrim {
        let cutoff = ISO8601Time.milliseconds(storedBefore)
        // The queue's totals by rule first, read beside the writer (WAL): a queue within its bounds, the
        // usual case also while a backlog drains, costs that one pass and holds no write lock while it
        // scans, so the write-behind's commits of the messages coming in do not wait for it each second.
        let totals = try await read("trimForwards(bridge: \(bridge))") { db in
            try Self.queueTotals(db, bridge: bridge)
        }
        guard Self.pastBounds(totals, cutoff: cutoff, maxBytes: maxBytes) else {
            return Self.trim(before: totals, afterAge: totals, left: totals)
        }
        // A JSON array, read by json_each: up to a few thousand ids, past SQLite's bound on arguments.
        let sparedJSON = "[" + spared.map(String.init).joined(separator: ",") + "]"
        return try await write("trimForwards(bridge: \(bridge))") { db in
            // Read again under the write lock: messages came and went since.
            let before = try Self.queueTotals(db, bridge: bridge)
            var afterAge = before
            if let oldest = before.values.compactMap(\.oldest).min(), oldest < cutoff {
                try db.execute(
                    sql: """
                        DELETE FROM bridge_queue WHERE bridge = ? AND stored_at < ?
                            AND id NOT IN (SELECT value FROM json_each(?))
                        """, arguments: [bridge, cutoff, sparedJSON])
                afterAge = try Self.queueTotals(db, bridge: bridge)
            }
            var left = afterAge
            if afterAge.values.reduce(0, { $0 + $1.queued.bytes }) > maxBytes {
                // Each row with the bytes of itself and every newer row: those past the bound go.
                try db.execute(
                    sql: """
                        DELETE FROM bridge_queue WHERE id IN (
                            SELECT id FROM (
                                SELECT id, SUM(length(payload)) OVER (ORDER BY id DESC) AS newer
                                FROM bridge_queue WHERE bridge = ?)
                            WHERE newer > ? AND id NOT IN (SELECT value FROM json_each(?)))
                        """, arguments: [bridge, maxBytes, sparedJSON])
                left = try Self.queueTotals(db, bridge: bridge)
            }
            return Self.trim(before: before, afterAge: afterAge, left: left)
        }
    }

    /// The queue's totals by rule, with when the oldest of each was kept (milliseconds).
    private typealias QueueTotals = [String: (queued: QueuedForwards, oldest: Int64?)]

    /// True when a message is older than `cutoff` or the queue holds more than `maxBytes`.
    private static func pastBounds(_ totals: QueueTotals, cutoff: Int64, maxBytes: Int) -> Bool {
        if let oldest = totals.values.compactMap(\.oldest).min(), oldest < cutoff { return true }
        return totals.values.reduce(0) { $0 + $1.queued.bytes } > maxBytes
    }

    /// What a trim did, from the totals before it, after its age bound and at its end.
    private static func trim(before: QueueTotals, afterAge: QueueTotals, left: QueueTotals) -> ForwardTrim {
        var rules: [String: ForwardTrim.Rule] = [:]
        for (rule, start) in before {
            let aged = afterAge[rule]?.queued.messages ?? 0
            let remaining = left[rule]?.queued ?? QueuedForwards()
            rules[rule] = ForwardTrim.Rule(
                byAge: start.queued.messages - aged, byBytes: aged - remaining.messages, left: remaining)
        }
        let oldest = left.values.compactMap(\.oldest).min()
        return ForwardTrim(rules: rules, oldest: oldest.map { Date(timeIntervalSince1970: Double($0) / 1000) })
    }

    /// What waits for `bridge` by rule, with when the oldest of each was kept.
    private static func queueTotals(_ db: Database, bridge: String) throws -> QueueTotals {
        var totals: QueueTotals = [:]
        let rows = try Row.fetchCursor(
            db.cachedStatement(
                sql: """
                    SELECT rule, COUNT(*) AS n, COALESCE(SUM(length(payload)), 0) AS bytes, MIN(stored_at) AS oldest
                    FROM bridge_queue WHERE bridge = ? GROUP BY rule
                    """), arguments: [bridge])
        while let row = try rows.next() {
            totals[row["rule"]] = (QueuedForwards(messages: row["n"], bytes: row["bytes"]), row["oldest"])
        }
        return totals
    }

    public func stateIdentity() async throws -> String {
        try await read("stateIdentity()") { db in
            try String.fetchOne(db, sql: "SELECT id FROM state_identity") ?? ""
        }
    }

    public func oldestForward(bridge: String) async throws -> Date? {
        try await read("oldestForward(bridge: \(bridge))") { db in
            try Int64.fetchOne(
                db, sql: "SELECT stored_at FROM bridge_queue WHERE bridge = ? ORDER BY id LIMIT 1", arguments: [bridge]
            ).map { Date(timeIntervalSince1970: Double($0) / 1000) }
        }
    }

    public func forwardBacklogByRule(bridge: String) async throws -> [String: QueuedForwards] {
        try await read("forwardBacklogByRule(bridge: \(bridge))") { db in
            try Self.queueTotals(db, bridge: bridge).mapValues(\.queued)
        }
    }
}

extension StoreSchema {
    /// The queue's table, oldest row first by id.
    static func createBridgeQueue(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE bridge_queue (
                    id INTEGER PRIMARY KEY AUTOINCREMENT, bridge TEXT NOT NULL, topic TEXT NOT NULL,
                    payload BLOB NOT NULL, qos INTEGER NOT NULL, retain INTEGER NOT NULL, stored_at INTEGER NOT NULL
                ) STRICT;
                CREATE INDEX bridge_queue_by_bridge ON bridge_queue(bridge, id);
                """)
    }

    /// The state's identity, one random row made with the state (``BridgeStore/stateIdentity()``).
    static func createStateIdentity(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE state_identity (id TEXT NOT NULL) STRICT;
                INSERT INTO state_identity (id) VALUES (lower(hex(randomblob(6))));
                """)
    }

    /// The `out` rule that kept each message (its topic filter), by which the queue and its drops
    /// are counted; '' for messages kept before.
    static func addBridgeQueueRule(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE bridge_queue ADD COLUMN rule TEXT NOT NULL DEFAULT ''")
    }
}
