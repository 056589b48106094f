import Foundation
import GRDB
import TrellisCore
import TrellisStore

/// ``BridgeStore`` over SQLite: one table, its rows in the order they were kept.
extension SQLiteStore {
    public func enqueueForward(
        bridge: String, topic: String, payload: [UInt8], qos: Int, retain: Bool, at time: Date
    ) async throws {
        try await write("enqueueForward(bridge: \(bridge), topic: \(topic))") { db in
            try db.cachedStatement(
                sql: """
                    INSERT INTO bridge_queue (bridge, topic, payload, qos, retain, stored_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: [bridge, topic, Data(payload), qos, retain, ISO8601Time.milliseconds(time)])
        }
    }

    public func forwards(bridge: String, after id: Int64, limit: Int) async throws -> [ForwardWindow.Message] {
        try await read("forwards(bridge: \(bridge), after: \(id))") { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT id, topic, payload, qos, retain FROM bridge_queue
                        WHERE bridge = ? AND id > ? ORDER BY id LIMIT ?
                        """), arguments: [bridge, id, limit]
            ).map { row in
                ForwardWindow.Message(
                    id: row["id"], topic: row["topic"], payload: [UInt8](row["payload"] as Data), qos: row["qos"],
                    retain: row["retain"])
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

    public func trimForwards(bridge: String, maxBytes: Int, storedBefore: Date) async throws -> ForwardTrim {
        let cutoff = ISO8601Time.milliseconds(storedBefore)
        return try await write("trimForwards(bridge: \(bridge))") { db in
            // The queue's totals first, one pass: a queue within its bounds (the usual case, also while a
            // backlog drains) costs only that, not the two deleting passes, which run each second.
            func totals() throws -> (messages: Int, bytes: Int, oldest: Int64?) {
                let row = try Row.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT COUNT(*) AS n, COALESCE(SUM(length(payload)), 0) AS bytes, MIN(stored_at) AS oldest
                            FROM bridge_queue WHERE bridge = ?
                            """), arguments: [bridge])
                return (row?["n"] ?? 0, row?["bytes"] ?? 0, row?["oldest"])
            }
            var queue = try totals()
            var byAge = 0
            if let oldest = queue.oldest, oldest < cutoff {
                try db.execute(
                    sql: "DELETE FROM bridge_queue WHERE bridge = ? AND stored_at < ?", arguments: [bridge, cutoff])
                byAge = db.changesCount
                queue = try totals()
            }
            var byBytes = 0
            if queue.bytes > maxBytes {
                // Each row with the bytes of itself and every newer row: those past the bound go.
                try db.execute(
                    sql: """
                        DELETE FROM bridge_queue WHERE id IN (
                            SELECT id FROM (
                                SELECT id, SUM(length(payload)) OVER (ORDER BY id DESC) AS newer
                                FROM bridge_queue WHERE bridge = ?)
                            WHERE newer > ?)
                        """, arguments: [bridge, maxBytes])
                byBytes = db.changesCount
                queue = try totals()
            }
            return ForwardTrim(
                byAge: byAge, byBytes: byBytes, messages: queue.messages, bytes: queue.bytes,
                oldest: queue.oldest.map { Date(timeIntervalSince1970: Double($0) / 1000) })
        }
    }

    public func oldestForward(bridge: String) async throws -> Date? {
        try await read("oldestForward(bridge: \(bridge))") { db in
            try Int64.fetchOne(
                db, sql: "SELECT stored_at FROM bridge_queue WHERE bridge = ? ORDER BY id LIMIT 1", arguments: [bridge]
            ).map { Date(timeIntervalSince1970: Double($0) / 1000) }
        }
    }

    public func forwardBacklog(bridge: String) async throws -> (messages: Int, bytes: Int) {
        try await read("forwardBacklog(bridge: \(bridge))") { db in
            let row = try Row.fetchOne(
                db,
                sql:
                    "SELECT COUNT(*) AS n, COALESCE(SUM(length(payload)), 0) AS bytes FROM bridge_queue WHERE bridge = ?",
                arguments: [bridge])
            return (row?["n"] ?? 0, row?["bytes"] ?? 0)
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
}
