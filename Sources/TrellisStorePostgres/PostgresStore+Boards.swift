import Foundation
import PostgresNIO
import TrellisCore
import TrellisStore

/// Likes and boards of ``CatalogStore`` over PostgreSQL: each change is one transaction whose SQL
/// decides (conditional inserts and updates).
///
/// Races between relays: a like is settled by its primary key (`ON CONFLICT DO NOTHING`). The
/// board limit and a client's unique board names span rows, so creating or renaming a board first
/// takes a transaction-scoped advisory lock on the client (`boards`, client): a client's creations
/// and renames run one at a time, each counting and checking names after the previous committed
/// (the `(client, name)` constraint stays as the last word). Adding to or removing from a board
/// first locks the board's row `FOR UPDATE`, so the per-board item limit and the next position are
/// computed by one relay at a time, and a racing delete of the board waits or wins whole.
extension PostgresStore {
    public func addLike(client: String, symbol: String, at: Date) async throws -> LikeOutcome {
        let at = at.storeMilliseconds
        let logger = self.logger
        return try await write("addLike(client: \(client), symbol: \(symbol))") { connection in
            let added = try await connection.query(
                """
                INSERT INTO catalog_like (client, symbol, liked_at)
                SELECT \(client), \(symbol), \(at) WHERE EXISTS (SELECT 1 FROM species WHERE symbol = \(symbol))
                ON CONFLICT (client, symbol) DO NOTHING
                RETURNING 1
                """, logger: logger
            ).collect()
            if !added.isEmpty { return .added }
            let known =
                try await connection.query(
                    "SELECT EXISTS (SELECT 1 FROM species WHERE symbol = \(symbol))", logger: logger
                )
                .decode(Bool.self).gathered().first ?? false
            return known ? .alreadyLiked : .unknownSpecies
        }
    }

    public func removeLike(client: String, symbol: String) async throws -> Bool {
        let logger = self.logger
        return try await write("removeLike(client: \(client), symbol: \(symbol))") { connection in
            try await !connection.query(
                "DELETE FROM catalog_like WHERE client = \(client) AND symbol = \(symbol) RETURNING 1", logger: logger
            )
            .collect().isEmpty
        }
    }

    public func likes(client: String) async throws -> [Species] {
        let logger = self.logger
        return try await read("likes(client: \(client))") { connection in
            try await Self.species(
                connection.query(
                    """
                    SELECT \(unescaped: Species.storedColumns("s")) FROM catalog_like l JOIN species s ON s.symbol = l.symbol
                    WHERE l.client = \(client) ORDER BY l.liked_at DESC, l.symbol
                    """, logger: logger))
        }
    }

    public func createBoard(
        client: String, name: String, description: String, isPublic: Bool,
        maxBoards: Int, at: Date
    ) async throws -> CreateBoardOutcome {
        let at = at.storeMilliseconds
        let logger = self.logger
        return try await write("createBoard(client: \(client), name: \(name))") { connection in
            try await Self.lockBoards(of: client, on: connection, logger: logger)
            let inserted = try await connection.query(
                """
                INSERT INTO catalog_board (client, name, description, public, created_at)
                SELECT \(client), \(name), \(description), \(isPublic), \(at)
                WHERE NOT EXISTS (SELECT 1 FROM catalog_board WHERE client = \(client) AND name = \(name))
                  AND (SELECT count(*) FROM catalog_board WHERE client = \(client)) < \(Int64(maxBoards))
                ON CONFLICT (client, name) DO NOTHING
                RETURNING id
                """, logger: logger
            ).decode(Int64.self).gathered()
            guard let id = inserted.first, let board = try await Self.board(id: id, on: connection, logger: logger)
            else {
                let taken =
                    try await connection.query(
                        """
                        SELECT EXISTS (SELECT 1 FROM catalog_board WHERE client = \(client) AND name = \(name))
                        """, logger: logger
                    ).decode(Bool.self).gathered().first ?? false
                return taken ? .nameTaken : .tooManyBoards
            }
            return .created(board)
        }
    }

    public func updateBoard(
        client: String, id: Int64, name: String?, description: String?,
        isPublic: Bool?
    ) async throws -> UpdateBoardOutcome {
        let logger = self.logger
        return try await write("updateBoard(client: \(client), id: \(id))") { connection in
            if name != nil { try await Self.lockBoards(of: client, on: connection, logger: logger) }
            let updated = try await connection.query(
                """
                UPDATE catalog_board SET
                    name = COALESCE(\(name)::text, name),
                    description = COALESCE(\(description)::text, description),
                    public = COALESCE(\(isPublic)::boolean, public)
                WHERE id = \(id) AND client = \(client)
                  AND NOT EXISTS (SELECT 1 FROM catalog_board b
                                  WHERE b.client = \(client) AND b.name = \(name)::text AND b.id <> \(id))
                RETURNING id
                """, logger: logger
            ).collect()
            if !updated.isEmpty, let board = try await Self.board(id: id, on: connection, logger: logger) {
                return .updated(board)
            }
            let exists =
                try await connection.query(
                    """
                    SELECT EXISTS (SELECT 1 FROM catalog_board WHERE id = \(id) AND client = \(client))
                    """, logger: logger
                ).decode(Bool.self).gathered().first ?? false
            return exists ? .nameTaken : .notFound
        }
    }

    public func deleteBoard(client: String, id: Int64) async throws -> Bool {
        let logger = self.logger
        return try await write("deleteBoard(client: \(client), id: \(id))") { connection in
            try await !connection.query(
                "DELETE FROM catalog_board WHERE id = \(id) AND client = \(client) RETURNING 1", logger: logger
            )
            .collect().isEmpty
        }
    }

    /// Adds the symbols one by one, as SQLite does; when the board fills up before the last new
    /// one, every insert of this call is rolled back to a savepoint and `tooMany` is answered.
    public func addToBoard(client: String, id: Int64, symbols: [String], maxItems: Int) async throws -> BoardAddOutcome?
    {
        let symbols = Self.unique(symbols)
        let logger = self.logger
        return try await write("addToBoard(client: \(client), id: \(id))") { connection -> BoardAddOutcome? in
            guard try await Self.lockBoard(id, of: client, on: connection, logger: logger) else { return nil }
            let known = Set(
                try await connection.query(
                    "SELECT symbol FROM species WHERE symbol = ANY(\(symbols)::text[])", logger: logger
                )
                .decode(String.self).gathered())
            let unknown = symbols.filter { !known.contains($0) }
            if !unknown.isEmpty { return BoardAddOutcome(added: [], alreadyPresent: [], unknown: unknown) }
            try await connection.query("SAVEPOINT board_add", logger: logger)
            var added: [String] = []
            var present: [String] = []
            for symbol in symbols {
                let inserted = try await connection.query(
                    """
                    INSERT INTO catalog_board_item (board_id, symbol, position)
                    SELECT \(id), \(symbol), COALESCE((SELECT max(position) FROM catalog_board_item WHERE board_id = \(id)), 0) + 1
                    WHERE (SELECT count(*) FROM catalog_board_item WHERE board_id = \(id)) < \(Int64(maxItems))
                    ON CONFLICT (board_id, symbol) DO NOTHING
                    RETURNING 1
                    """, logger: logger
                ).collect()
                if !inserted.isEmpty {
                    added.append(symbol)
                } else if try await connection.query(
                    """
                    SELECT EXISTS (SELECT 1 FROM catalog_board_item WHERE board_id = \(id) AND symbol = \(symbol))
                    """, logger: logger
                ).decode(Bool.self).gathered().first == true {
                    present.append(symbol)
                } else {
                    // The board is full: nothing of this call is kept.
                    try await connection.query("ROLLBACK TO SAVEPOINT board_add", logger: logger)
                    return BoardAddOutcome(added: [], alreadyPresent: [], tooMany: true)
                }
            }
            try await connection.query("RELEASE SAVEPOINT board_add", logger: logger)
            return BoardAddOutcome(added: added, alreadyPresent: present)
        }
    }

    public func removeFromBoard(client: String, id: Int64, symbols: [String]) async throws -> BoardRemoveOutcome? {
        let symbols = Self.unique(symbols)
        let logger = self.logger
        return try await write("removeFromBoard(client: \(client), id: \(id))") { connection -> BoardRemoveOutcome? in
            guard try await Self.lockBoard(id, of: client, on: connection, logger: logger) else { return nil }
            var removed: [String] = []
            var absent: [String] = []
            for symbol in symbols {
                let deleted = try await connection.query(
                    "DELETE FROM catalog_board_item WHERE board_id = \(id) AND symbol = \(symbol) RETURNING 1",
                    logger: logger
                ).collect()
                if deleted.isEmpty { absent.append(symbol) } else { removed.append(symbol) }
            }
            return BoardRemoveOutcome(removed: removed, notPresent: absent)
        }
    }

    public func boards(client: String) async throws -> [Board] {
        let logger = self.logger
        return try await read("boards(client: \(client))") { connection in
            try await Self.boards(
                connection.query(
                    "\(unescaped: Self.boardSelect) WHERE b.client = \(client) ORDER BY b.id", logger: logger))
        }
    }

    public func board(id: Int64, owner: String?, viewer: String) async throws -> BoardDetail? {
        let logger = self.logger
        return try await read("board(id: \(id))") { connection in
            guard
                let board = try await Self.boards(
                    connection.query(
                        """
                        \(unescaped: Self.boardSelect)
                        WHERE b.id = \(id) AND (b.client = \(viewer) OR b.public)
                          AND (\(owner)::text IS NULL OR b.client = \(owner)::text)
                        """, logger: logger)
                ).first
            else { return nil }
            let species = try await Self.species(
                connection.query(
                    """
                    SELECT \(unescaped: Species.storedColumns("s")) FROM catalog_board_item i JOIN species s ON s.symbol = i.symbol
                    WHERE i.board_id = \(id) ORDER BY i.position
                    """, logger: logger))
            return BoardDetail(board: board, species: species)
        }
    }

    private static let boardSelect = """
        SELECT b.id, b.client, b.name, b.description, b.public, b.created_at,
               (SELECT count(*) FROM catalog_board_item i WHERE i.board_id = b.id) AS count
        FROM catalog_board b
        """

    /// Every row of a query selecting ``boardSelect``'s columns.
    private static func boards(_ rows: PostgresRowSequence) async throws -> [Board] {
        var boards: [Board] = []
        for try await (id, client, name, description, isPublic, createdAt, count)
            in rows.decode((Int64, String, String, String, Bool, Int64, Int64).self)
        {
            boards.append(
                Board(
                    id: id, owner: client, name: name, description: description, isPublic: isPublic,
                    count: Int(count), createdAt: Date(storeMilliseconds: createdAt)))
        }
        return boards
    }

    private static func board(id: Int64, on connection: PostgresConnection, logger: Logger) async throws -> Board? {
        try await boards(connection.query("\(unescaped: boardSelect) WHERE b.id = \(id)", logger: logger)).first
    }

    /// Takes the advisory lock under which a client's boards are counted and their names checked.
    private static func lockBoards(of client: String, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "SELECT pg_advisory_xact_lock(hashtext('boards'), hashtext(\(client)))", logger: logger)
    }

    /// Locks a client's board row until commit.
    /// - Returns: `false` when the client has no such board.
    private static func lockBoard(
        _ id: Int64, of client: String, on connection: PostgresConnection,
        logger: Logger
    ) async throws -> Bool {
        try await !connection.query(
            "SELECT 1 FROM catalog_board WHERE id = \(id) AND client = \(client) FOR UPDATE", logger: logger
        )
        .collect().isEmpty
    }

    /// `values` without repeats, in first-seen order.
    private static func unique(_ values: [String]) -> [String] {
        var seen = Set<String>()
        return values.filter { seen.insert($0).inserted }
    }
}
