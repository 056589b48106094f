import Foundation
import GRDB
import TrellisCore
import TrellisStore

/// ``DeadLetterStore`` over SQLite: letters are written behind in batches and trimmed in SQL.
extension SQLiteStore {
    public func deadLetters(limit: Int) async throws -> [StoredDeadLetter] {
        if !buffer.isIdle { await buffer.drain() }
        return try await read("deadLetters(limit: \(limit))") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, reason, topic, payload, received_at FROM dead_letter
                    ORDER BY id DESC LIMIT ?
                    """, arguments: [max(0, limit)]
            ).map { row in
                let payload: Data = row["payload"]
                return StoredDeadLetter(
                    id: row["id"], reason: row["reason"], topic: row["topic"],
                    payload: [UInt8](payload), receivedAt: Date(storeMilliseconds: row["received_at"]))
            }
        }
    }
}
