import Foundation
import GRDB
import TrellisCore
import TrellisStore

/// Reading dead letters back by reason, topic prefix and time, for operators
/// (`trellis/request/deadletters/list`, `trellis deadletters`).
extension SQLiteStore {
    public func deadLetters(matching query: DeadLetterQuery) async throws -> [StoredDeadLetter] {
        if !buffer.isIdle { await buffer.drain() }
        return try await read("deadLetters(matching: \(query))") { db in
            let (sql, arguments) = Self.deadLetterQuery(query)
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                let payload: Data = row["payload"]
                return StoredDeadLetter(
                    id: row["id"], reason: row["reason"], topic: row["topic"],
                    payload: [UInt8](payload), receivedAt: Date(storeMilliseconds: row["received_at"]))
            }
        }
    }
}

extension SQLiteStore {
    /// The statement of `query` and its arguments.
    static func deadLetterQuery(_ query: DeadLetterQuery) -> (String, StatementArguments) {
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let reason = query.reason {
            conditions.append("reason = ?")
            arguments += [reason]
        }
        if let prefix = query.topicPrefix {
            conditions.append("topic >= ?")
            arguments += [prefix]
            if let bound = query.topicUpperBound {
                conditions.append("topic < ?")
                arguments += [bound]
            }
        }
        if let since = query.since {
            conditions.append("received_at >= ?")
            arguments += [since.storeMilliseconds]
        }
        if let before = query.before {
            conditions.append("id < ?")
            arguments += [before]
        }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        arguments += [query.limit]
        return (
            "SELECT id, reason, topic, payload, received_at FROM dead_letter \(filter) ORDER BY id DESC LIMIT ?",
            arguments
        )
    }
}

extension StoreSchema {
    /// Indexes that let an operator's dead-letter query (``SQLiteStore/deadLetters(matching:)``)
    /// read only the letters it returns: by reason newest first, and by topic prefix.
    static func createDeadLetterIndexes(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE INDEX dead_letter_by_reason ON dead_letter(reason, id);
                CREATE INDEX dead_letter_by_topic ON dead_letter(topic, id);
                """)
    }

    /// The client each dead letter counts against (``DeadLetterOwner``; empty for none), and its
    /// index, on which a client's letters beyond its quota are found and trimmed.
    static func createDeadLetterClient(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE dead_letter ADD COLUMN client_key TEXT NOT NULL DEFAULT '';
                CREATE INDEX dead_letter_by_client ON dead_letter(client_key, id);
                """)
    }
}
