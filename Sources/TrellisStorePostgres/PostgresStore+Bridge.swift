import Foundation
import PostgresNIO
import TrellisCore
import TrellisStore

/// ``BridgeStore`` over PostgreSQL: one table, its rows in the order of their ids (kept by the
/// write-behind, ``PostgresBufferedWrite``). In a share group every relay queues here, and the
/// relay holding the bridge's lease forwards (``StoreLeases``).
extension PostgresStore {
    public func forwards(bridge: String, after id: Int64, limit: Int) async throws -> [ForwardWindow.Message] {
        let logger = self.logger
        return try await read("forwards(bridge: \(bridge), after: \(id))") { connection in
            var messages: [ForwardWindow.Message] = []
            for try await (id, topic, payload, qos, retain)
                in (try await connection.query(
                    """
                    SELECT id, topic, payload, qos, retain FROM bridge_queue
                    WHERE bridge = \(bridge) AND id > \(id) ORDER BY id LIMIT \(Int64(max(0, limit)))
                    """, logger: logger)).decode((Int64, String, Data, Int32, Bool).self)
            {
                messages.append(
                    ForwardWindow.Message(
                        id: id, topic: topic, payload: [UInt8](payload), qos: Int(qos), retain: retain))
            }
            return messages
        }
    }

    public func deleteForwards(bridge: String, ids: [Int64]) async throws {
        guard !ids.isEmpty else { return }
        let logger = self.logger
        try await write("deleteForwards(bridge: \(bridge), \(ids.count) ids)") { connection in
            _ = try await connection.query(
                "DELETE FROM bridge_queue WHERE bridge = \(bridge) AND id = ANY(\(ids))", logger: logger)
        }
    }

    public func stateIdentity() async throws -> String {
        let logger = self.logger
        return try await read("stateIdentity()") { connection in
            for try await id in (try await connection.query("SELECT id FROM state_identity", logger: logger))
                .decode(String.self)
            {
                return id
            }
            return ""
        }
    }

    public func oldestForward(bridge: String) async throws -> Date? {
        let logger = self.logger
        return try await read("oldestForward(bridge: \(bridge))") { connection in
            for try await storedAt
                in (try await connection.query(
                    "SELECT stored_at FROM bridge_queue WHERE bridge = \(bridge) ORDER BY id LIMIT 1", logger: logger))
                .decode(Int64.self)
            {
                return Date(timeIntervalSince1970: Double(storedAt) / 1000)
            }
            return nil
        }
    }

    public func forwardBacklogByRule(bridge: String) async throws -> [String: QueuedForwards] {
        let logger = self.logger
        return try await read("forwardBacklogByRule(bridge: \(bridge))") { connection in
            var backlog: [String: QueuedForwards] = [:]
            for try await (rule, count, bytes)
                in (try await connection.query(
                    """
                    SELECT rule, COUNT(*), COALESCE(SUM(octet_length(payload)), 0)::bigint FROM bridge_queue
                    WHERE bridge = \(bridge) GROUP BY rule
                    """, logger: logger)).decode((String, Int64, Int64).self)
            {
                backlog[rule] = QueuedForwards(messages: Int(count), bytes: Int(bytes))
            }
            return backlog
        }
    }

    public func trimForwards(
        bridge: String, maxBytes: Int, storedBefore: Date, sparing spared: [Int64]
    ) async throws -> ForwardTrim {
        let logger = self.logger
        let before = ISO8601Time.milliseconds(storedBefore)
        let bound = Int64(maxBytes)
        return try await write("trimForwards(bridge: \(bridge))") { connection in
            // One statement: the age bound first, then the bytes of what the age left, the newest kept
            // and the spared; a row per rule that had messages.
            let rows = try await connection.query(
                """
                WITH aged AS (
                    DELETE FROM bridge_queue
                    WHERE bridge = \(bridge) AND stored_at < \(before) AND NOT (id = ANY(\(spared)))
                    RETURNING id, rule),
                ranked AS (
                    SELECT id, rule, stored_at, octet_length(payload) AS size,
                        SUM(octet_length(payload)) OVER (ORDER BY id DESC) <= \(bound) OR id = ANY(\(spared)) AS kept
                    FROM bridge_queue WHERE bridge = \(bridge) AND id NOT IN (SELECT id FROM aged)),
                over AS (
                    DELETE FROM bridge_queue WHERE id IN (SELECT id FROM ranked WHERE NOT kept)
                    RETURNING id, rule),
                rules AS (SELECT rule FROM aged UNION SELECT rule FROM ranked)
                SELECT rules.rule,
                    (SELECT COUNT(*) FROM aged WHERE aged.rule = rules.rule),
                    (SELECT COUNT(*) FROM over WHERE over.rule = rules.rule),
                    (SELECT COUNT(*) FROM ranked WHERE ranked.rule = rules.rule AND kept),
                    (SELECT COALESCE(SUM(size), 0)::bigint FROM ranked WHERE ranked.rule = rules.rule AND kept),
                    (SELECT MIN(stored_at) FROM ranked WHERE ranked.rule = rules.rule AND kept)
                FROM rules
                """, logger: logger)
            var parts: [String: ForwardTrim.Rule] = [:]
            var oldest: Int64?
            for try await (rule, aged, over, messages, bytes, first)
                in rows.decode((String, Int64, Int64, Int64, Int64, Int64?).self)
            {
                parts[rule] = ForwardTrim.Rule(
                    byAge: Int(aged), byBytes: Int(over),
                    left: QueuedForwards(messages: Int(messages), bytes: Int(bytes)))
                if let first { oldest = min(oldest ?? first, first) }
            }
            return ForwardTrim(rules: parts, oldest: oldest.map { Date(timeIntervalSince1970: Double($0) / 1000) })
        }
    }

    /// The queue's table, as SQLite's.
    static let bridgeQueue = [
        """
        CREATE TABLE bridge_queue (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            bridge text COLLATE "C" NOT NULL,
            topic text COLLATE "C" NOT NULL,
            payload bytea NOT NULL,
            qos integer NOT NULL,
            retain boolean NOT NULL,
            stored_at bigint NOT NULL)
        """,
        "CREATE INDEX bridge_queue_by_bridge ON bridge_queue(bridge, id)"
    ]

    /// The state's identity, as SQLite's: one random row made with the state.
    static let stateIdentity = [
        "CREATE TABLE state_identity (id text COLLATE \"C\" NOT NULL)",
        "INSERT INTO state_identity (id) SELECT substr(md5(random()::text || clock_timestamp()::text), 1, 12)"
    ]

    /// The `out` rule that kept each message, as SQLite's.
    static let bridgeQueueRule = [#"ALTER TABLE bridge_queue ADD COLUMN rule text COLLATE "C" NOT NULL DEFAULT ''"#]
}
