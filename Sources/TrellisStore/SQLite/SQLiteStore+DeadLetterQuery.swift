import Foundation
import GRDB
import TrellisCore

/// Reading dead letters back by reason, topic prefix and time, for operators
/// (`trellis/request/deadletters/list`, `trellis deadletters`).
extension SQLiteStore {
    public func deadLetters(matching query: DeadLetterQuery) async throws -> [StoredDeadLetter] {
        if !buffer.isIdle { await buffer.drain() }
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
        let sql = "SELECT id, reason, topic, payload, received_at FROM dead_letter \(filter) ORDER BY id DESC LIMIT ?"
        arguments += [query.limit]
        let bound = arguments
        return try await read("deadLetters(matching: \(query))") { db in
            try Row.fetchAll(db, sql: sql, arguments: bound).map { row in
                let payload: Data = row["payload"]
                return StoredDeadLetter(
                    id: row["id"], reason: row["reason"], topic: row["topic"],
                    payload: [UInt8](payload), receivedAt: Date(storeMilliseconds: row["received_at"]))
            }
        }
    }
}

extension StoreSchema {
    /// Indexes that let an operator's dead-letter query (``SQLiteStore/deadLetters(matching:)``)
    /// read only the letters it returns: by reason newest first, and by topic prefix.
    static func createDeadLetterIndexes(_ db: Database) throws {
        try db.execute(sql: """
            CREATE INDEX dead_letter_by_reason ON dead_letter(reason, id);
            CREATE INDEX dead_letter_by_topic ON dead_letter(topic, id);
            """)
    }
}
