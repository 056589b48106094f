import Foundation
import PostgresNIO
import TrellisCore
import TrellisStore

/// Reading dead letters back by reason, topic prefix and time over PostgreSQL, as
/// ``SQLiteStore/deadLetters(matching:)`` does over SQLite: the same conditions, the same order.
extension PostgresStore {
    public func deadLetters(matching query: DeadLetterQuery) async throws -> [StoredDeadLetter] {
        if !commits.buffer.isIdle { await commits.buffer.drain() }
        let logger = self.logger
        let statement = Self.deadLetterQuery(query)
        return try await read("deadLetters(matching: \(query))") { connection in
            var letters: [StoredDeadLetter] = []
            for try await (id, reason, topic, payload, at) in (try await connection.query(statement, logger: logger))
                .decode((Int64, String, String, Data, Int64).self)
            {
                letters.append(
                    StoredDeadLetter(
                        id: id, reason: reason, topic: topic, payload: [UInt8](payload),
                        receivedAt: Date(storeMilliseconds: at)))
            }
            return letters
        }
    }

    /// The statement of `query`, every value a bound parameter.
    static func deadLetterQuery(_ query: DeadLetterQuery) -> PostgresQuery {
        var bindings = PostgresBindings()
        func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
            bindings.append(value)
            return "$\(bindings.count)"
        }
        var conditions: [String] = []
        if let reason = query.reason { conditions.append("reason = \(bind(reason))") }
        if let prefix = query.topicPrefix {
            conditions.append("topic >= \(bind(prefix))")
            if let bound = query.topicUpperBound { conditions.append("topic < \(bind(bound))") }
        }
        if let since = query.since { conditions.append("received_at >= \(bind(since.storeMilliseconds))") }
        if let before = query.before { conditions.append("id < \(bind(before))") }
        let sql = """
            SELECT id, reason, topic, payload, received_at FROM dead_letter
            \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "))
            ORDER BY id DESC LIMIT \(bind(Int64(query.limit)))
            """
        return PostgresQuery(unsafeSQL: sql, binds: bindings)
    }
}

extension PostgresSchema {
    /// The indexes of an operator's dead-letter query, as in SQLite (``StoreSchema/createDeadLetterIndexes(_:)``).
    static let deadLetterIndexes = [
        "CREATE INDEX dead_letter_by_reason ON dead_letter(reason, id)",
        "CREATE INDEX dead_letter_by_topic ON dead_letter(topic, id)"
    ]

    /// The client each dead letter counts against, and its index, as in SQLite
    /// (``StoreSchema/createDeadLetterClient(_:)``).
    static let deadLetterClient = [
        "ALTER TABLE dead_letter ADD COLUMN client_key text COLLATE \"C\" NOT NULL DEFAULT ''",
        "CREATE INDEX dead_letter_by_client ON dead_letter(client_key, id)"
    ]
}
