import GRDB
import TrellisCore
import TrellisStore

/// ``DeliveryStore`` over SQLite: one row per packet identifier (so at most 65,535 rows), with a
/// sequence number giving the order in which deliveries were handled.
extension SQLiteStore {
    public func recentDeliveries(limit: Int) async throws -> [DeliveryMark] {
        await buffer.drain()
        return try await read("recentDeliveries(limit: \(limit))") { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT packet_id, fingerprint FROM delivery ORDER BY seq DESC LIMIT ?
                    """, arguments: [limit])
            return rows.reversed().map { row in
                DeliveryMark(packetID: row["packet_id"], fingerprint: UInt64(bitPattern: row["fingerprint"]))
            }
        }
    }

    public func forgetDeliveries() async throws {
        await buffer.drain()
        try await write("forgetDeliveries()") { db in
            try db.execute(sql: "DELETE FROM delivery")
        }
    }

    /// Records `mark` as the latest delivery handled, replacing an older row for its identifier.
    static let upsertDeliverySQL = """
        INSERT INTO delivery (packet_id, fingerprint, seq)
        VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM delivery))
        ON CONFLICT (packet_id) DO UPDATE SET fingerprint = excluded.fingerprint, seq = excluded.seq
        """

    /// Writes `mark` inside the caller's transaction.
    static func record(_ mark: DeliveryMark, in db: Database) throws {
        try db.cachedStatement(sql: upsertDeliverySQL)
            .execute(arguments: [mark.packetID, Int64(bitPattern: mark.fingerprint)])
    }
}
