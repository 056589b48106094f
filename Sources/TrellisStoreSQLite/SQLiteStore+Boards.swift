import Foundation
import GRDB
import TrellisCore
import TrellisStore

/// Likes and boards of ``CatalogStore`` over SQLite: each change is one write transaction whose
/// SQL decides (conditional inserts and updates), so no limit can be overrun by concurrent writers.
extension SQLiteStore {
    public func addLike(client: String, symbol: String, at: Date) async throws -> LikeOutcome {
        let arguments: StatementArguments = ["client": client, "symbol": symbol, "at": at.storeMilliseconds]
        return try await write("addLike(client: \(client), symbol: \(symbol))") { db in
            try db.execute(
                sql: """
                    INSERT INTO catalog_like (client, symbol, liked_at)
                    SELECT :client, :symbol, :at WHERE EXISTS (SELECT 1 FROM species WHERE symbol = :symbol)
                    ON CONFLICT (client, symbol) DO NOTHING
                    """, arguments: arguments)
            if db.changesCount > 0 { return .added }
            let known = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM species WHERE symbol = :symbol)",
                arguments: arguments)!
            return known ? .alreadyLiked : .unknownSpecies
        }
    }

    public func removeLike(client: String, symbol: String) async throws -> Bool {
        try await write("removeLike(client: \(client), symbol: \(symbol))") { db in
            try db.execute(sql: "DELETE FROM catalog_like WHERE client = ? AND symbol = ?", arguments: [client, symbol])
            return db.changesCount > 0
        }
    }

    public func likes(client: String) async throws -> [Species] {
        try await read("likes(client: \(client))") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Species.storedColumns("s")) FROM catalog_like l JOIN species s ON s.symbol = l.symbol
                    WHERE l.client = ? ORDER BY l.liked_at DESC, l.symbol
                    """, arguments: [client]
            ).map(Self.species(from:))
        }
    }

    public func createBoard(
        client: String, name: String, description: String, isPublic: Bool,
        maxBoards: Int, at: Date
    ) async throws -> CreateBoardOutcome {
        let arguments: StatementArguments = [
            "client": client, "name": name, "description": description, "public": isPublic,
            "at": at.storeMilliseconds, "max": maxBoards
        ]
        return try await write("createBoard(client: \(client), name: \(name))") { db in
            let id = try Int64.fetchOne(
                db,
                sql: """
                    INSERT INTO catalog_board (client, name, description, public, created_at)
                    SELECT :client, :name, :description, :public, :at
                    WHERE NOT EXISTS (SELECT 1 FROM catalog_board WHERE client = :client AND name = :name)
                      AND (SELECT COUNT(*) FROM catalog_board WHERE client = :client) < :max
                    RETURNING id
                    """, arguments: arguments)
            guard let id else {
                let taken = try Bool.fetchOne(
                    db,
                    sql: """
                        SELECT EXISTS (SELECT 1 FROM catalog_board WHERE client = :client AND name = :name)
                        """, arguments: arguments)!
                return taken ? .nameTaken : .tooManyBoards
            }
            return .created(try Self.board(id: id, in: db)!)
        }
    }

    public func updateBoard(
        client: String, id: Int64, name: String?, description: String?,
        isPublic: Bool?
    ) async throws -> UpdateBoardOutcome {
        let arguments: StatementArguments = [
            "client": client, "id": id, "name": name, "description": description, "public": isPublic
        ]
        return try await write("updateBoard(client: \(client), id: \(id))") { db in
            try db.execute(
                sql: """
                    UPDATE catalog_board SET
                        name = COALESCE(:name, name),
                        description = COALESCE(:description, description),
                        public = COALESCE(:public, public)
                    WHERE id = :id AND client = :client
                      AND NOT EXISTS (SELECT 1 FROM catalog_board b
                                      WHERE b.client = :client AND b.name = :name AND b.id <> :id)
                    """, arguments: arguments)
            if db.changesCount > 0 { return .updated(try Self.board(id: id, in: db)!) }
            let exists = try Bool.fetchOne(
                db,
                sql: """
                    SELECT EXISTS (SELECT 1 FROM catalog_board WHERE id = :id AND client = :client)
                    """, arguments: arguments)!
            return exists ? .nameTaken : .notFound
        }
    }

    public func deleteBoard(client: String, id: Int64) async throws -> Bool {
        try await write("deleteBoard(client: \(client), id: \(id))") { db in
            try db.execute(sql: "DELETE FROM catalog_board WHERE id = ? AND client = ?", arguments: [id, client])
            return db.changesCount > 0
        }
    }

    public func addToBoard(client: String, id: Int64, symbols: [String], maxItems: Int) async throws -> BoardAddOutcome?
    {
        let symbols = Self.unique(symbols)
        do {
            return try await addToBoardOnce(client: client, id: id, symbols: symbols, maxItems: maxItems)
        } catch let error as StoreError where error.underlying is BoardFull {
            return BoardAddOutcome(added: [], alreadyPresent: [], tooMany: true)
        }
    }

    private func addToBoardOnce(client: String, id: Int64, symbols: [String], maxItems: Int) async throws
        -> BoardAddOutcome?
    {
        try await write("addToBoard(client: \(client), id: \(id))") { db in
            guard try Self.owns(client, board: id, in: db) else { return nil }
            let unknown = try symbols.filter { symbol in
                try !Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM species WHERE symbol = ?)", arguments: [symbol])!
            }
            if !unknown.isEmpty { return BoardAddOutcome(added: [], alreadyPresent: [], unknown: unknown) }
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO catalog_board_item (board_id, symbol, position)
                    SELECT :board, :symbol, COALESCE((SELECT MAX(position) FROM catalog_board_item WHERE board_id = :board), 0) + 1
                    WHERE (SELECT COUNT(*) FROM catalog_board_item WHERE board_id = :board) < :max
                    ON CONFLICT (board_id, symbol) DO NOTHING
                    """)
            var added: [String] = []
            var present: [String] = []
            for symbol in symbols {
                try insert.execute(arguments: ["board": id, "symbol": symbol, "max": maxItems])
                if db.changesCount > 0 {
                    added.append(symbol)
                } else if try Bool.fetchOne(
                    db,
                    sql: """
                        SELECT EXISTS (SELECT 1 FROM catalog_board_item WHERE board_id = ? AND symbol = ?)
                        """, arguments: [id, symbol])!
                {
                    present.append(symbol)
                } else {
                    // The board is full: undo this call's inserts by raising; the transaction rolls back.
                    throw BoardFull()
                }
            }
            return BoardAddOutcome(added: added, alreadyPresent: present)
        }
    }

    public func removeFromBoard(client: String, id: Int64, symbols: [String]) async throws -> BoardRemoveOutcome? {
        let symbols = Self.unique(symbols)
        return try await write("removeFromBoard(client: \(client), id: \(id))") { db in
            guard try Self.owns(client, board: id, in: db) else { return nil }
            let delete = try db.cachedStatement(sql: "DELETE FROM catalog_board_item WHERE board_id = ? AND symbol = ?")
            var removed: [String] = []
            var absent: [String] = []
            for symbol in symbols {
                try delete.execute(arguments: [id, symbol])
                if db.changesCount > 0 { removed.append(symbol) } else { absent.append(symbol) }
            }
            return BoardRemoveOutcome(removed: removed, notPresent: absent)
        }
    }

    public func boards(client: String) async throws -> [Board] {
        try await read("boards(client: \(client))") { db in
            try Row.fetchAll(db, sql: "\(Self.boardSelect) WHERE b.client = ? ORDER BY b.id", arguments: [client])
                .map(Self.board(from:))
        }
    }

    public func board(id: Int64, owner: String?, viewer: String) async throws -> BoardDetail? {
        try await read("board(id: \(id))") { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        \(Self.boardSelect)
                        WHERE b.id = :id AND (b.client = :viewer OR b.public = 1) AND (:owner IS NULL OR b.client = :owner)
                        """, arguments: ["id": id, "viewer": viewer, "owner": owner])
            else { return nil }
            let species = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Species.storedColumns("s")) FROM catalog_board_item i JOIN species s ON s.symbol = i.symbol
                    WHERE i.board_id = ? ORDER BY i.position
                    """, arguments: [id]
            ).map(Self.species(from:))
            return BoardDetail(board: Self.board(from: row), species: species)
        }
    }

    private static let boardSelect = """
        SELECT b.id, b.client, b.name, b.description, b.public, b.created_at,
               (SELECT COUNT(*) FROM catalog_board_item i WHERE i.board_id = b.id) AS count
        FROM catalog_board b
        """

    private static func board(from row: Row) -> Board {
        Board(
            id: row["id"], owner: row["client"], name: row["name"], description: row["description"],
            isPublic: row["public"], count: row["count"], createdAt: Date(storeMilliseconds: row["created_at"]))
    }

    private static func board(id: Int64, in db: Database) throws -> Board? {
        try Row.fetchOne(db, sql: "\(boardSelect) WHERE b.id = ?", arguments: [id]).map(board(from:))
    }

    private static func owns(_ client: String, board id: Int64, in db: Database) throws -> Bool {
        try Bool.fetchOne(
            db, sql: "SELECT EXISTS (SELECT 1 FROM catalog_board WHERE id = ? AND client = ?)",
            arguments: [id, client])!
    }
    /// `values` without repeats, in first-seen order.
    private static func unique(_ values: [String]) -> [String] {
        var seen = Set<String>()
        return values.filter { seen.insert($0).inserted }
    }
}

/// Thrown inside a board write to roll it back when the board would hold too many species.
struct BoardFull: Error {}
