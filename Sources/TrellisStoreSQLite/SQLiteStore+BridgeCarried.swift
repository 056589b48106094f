import Foundation
import GRDB
import TrellisCore
import TrellisStore

/// ``BridgeCarriedStore`` over SQLite: one table, its rows in the order they were recorded (written
/// behind, ``BufferedCommitsStore/recordCarriedIn(bridge:id:forgettingPast:)``).
extension SQLiteStore {
    /// The ids a bridge's receiver carried in, newest last by id: the migration `bridge-carried`.
    static let bridgeCarriedTable = """
        CREATE TABLE bridge_carried (
            id INTEGER PRIMARY KEY AUTOINCREMENT, bridge TEXT NOT NULL, origin TEXT NOT NULL, sequence INTEGER NOT NULL
        ) STRICT;
        CREATE INDEX bridge_carried_by_bridge ON bridge_carried(bridge, id);
        """

    /// Records an id carried in, in a batch of the write-behind; forgets the bridge's ids past the
    /// newest `keep` when asked (the index on (bridge, id) walks just those).
    static func recordCarriedIn(
        bridge: String, origin: String, sequence: Int64, forgettingPast keep: Int?, in db: Database
    )
        throws
    {
        try db.cachedStatement(sql: "INSERT INTO bridge_carried (bridge, origin, sequence) VALUES (?, ?, ?)")
            .execute(arguments: [bridge, origin, sequence])
        guard let keep else { return }
        try db.cachedStatement(
            sql: """
                DELETE FROM bridge_carried WHERE bridge = ? AND id <= (
                    SELECT id FROM bridge_carried WHERE bridge = ? ORDER BY id DESC LIMIT 1 OFFSET ?)
                """
        ).execute(arguments: [bridge, bridge, keep])
    }

    public func carriedIn(bridge: String, limit: Int) async throws -> [BridgeMessageID] {
        try await read("carriedIn(bridge: \(bridge))") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT origin, sequence FROM (
                        SELECT id, origin, sequence FROM bridge_carried WHERE bridge = ? ORDER BY id DESC LIMIT ?)
                    ORDER BY id
                    """, arguments: [bridge, max(0, limit)]
            ).map { BridgeMessageID(origin: $0["origin"], sequence: $0["sequence"]) }
        }
    }
}
