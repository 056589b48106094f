import Foundation
import GRDB
import TrellisCore

/// ``CatalogStore`` over SQLite: each change is one write transaction whose SQL decides
/// (conditional inserts, upserts, conditional updates); a search is one indexed query.
extension SQLiteStore {
    @discardableResult
    public func upsertSpecies(_ species: [Species]) async throws -> Int {
        let rows = species.map(SpeciesRow.init)
        return try await write("upsertSpecies(\(rows.count) species)") { db in
            try Self.upsert(rows, in: db)
            return rows.count
        }
    }

    @discardableResult
    public func seedCatalogIfEmpty(_ species: [Species]) async throws -> Int {
        let rows = species.map(SpeciesRow.init)
        return try await write("seedCatalogIfEmpty(\(rows.count) species)") { db in
            // The check and the inserts share one write transaction: no other writer can fill
            // the catalog in between.
            guard try !Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM species)")! else { return 0 }
            try Self.upsert(rows, in: db)
            return rows.count
        }
    }

    public func speciesCount() async throws -> Int {
        try await read("speciesCount()") { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM species")! }
    }

    public func species(symbol: String) async throws -> Species? {
        try await read("species(symbol: \(symbol))") { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.speciesColumns) FROM species WHERE symbol = ?",
                             arguments: [symbol]).map(Self.species(from:))
        }
    }

    public func searchSpecies(_ search: CatalogSearch) async throws -> CatalogSearchPage {
        let (sql, arguments) = Self.searchSQL(search)
        let limit = max(0, search.limit)
        let seed = search.seed
        let body: @Sendable (Database) throws -> CatalogSearchPage = { db in
            let rows = try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
            let shown = rows.prefix(limit)
            let species = shown.map(Self.species(from:))
            if let client = search.client, !species.isEmpty {
                let remember = try db.cachedStatement(sql: """
                    INSERT INTO catalog_seen (client, symbol) VALUES (?, ?) ON CONFLICT DO NOTHING
                    """)
                for item in species { try remember.execute(arguments: [client, item.symbol]) }
            }
            var next: CatalogCursor?
            if rows.count > limit, let last = shown.last {
                next = CatalogCursor(seed: seed, key: last["sort_key"], symbol: last["symbol"])
            }
            return CatalogSearchPage(species: species, next: next)
        }
        if search.client != nil {
            return try await write("searchSpecies(client: \(search.client ?? ""))", body)
        }
        return try await read("searchSpecies()", body)
    }

    public func addLike(client: String, symbol: String, at: Date) async throws -> LikeOutcome {
        let arguments: StatementArguments = ["client": client, "symbol": symbol, "at": at.storeMilliseconds]
        return try await write("addLike(client: \(client), symbol: \(symbol))") { db in
            try db.execute(sql: """
                INSERT INTO catalog_like (client, symbol, liked_at)
                SELECT :client, :symbol, :at WHERE EXISTS (SELECT 1 FROM species WHERE symbol = :symbol)
                ON CONFLICT (client, symbol) DO NOTHING
                """, arguments: arguments)
            if db.changesCount > 0 { return .added }
            let known = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM species WHERE symbol = :symbol)",
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
            try Row.fetchAll(db, sql: """
                SELECT \(Self.speciesColumns("s")) FROM catalog_like l JOIN species s ON s.symbol = l.symbol
                WHERE l.client = ? ORDER BY l.liked_at DESC, l.symbol
                """, arguments: [client]).map(Self.species(from:))
        }
    }

    public func createBoard(client: String, name: String, description: String, isPublic: Bool,
                            maxBoards: Int, at: Date) async throws -> CreateBoardOutcome {
        let arguments: StatementArguments = [
            "client": client, "name": name, "description": description, "public": isPublic,
            "at": at.storeMilliseconds, "max": maxBoards,
        ]
        return try await write("createBoard(client: \(client), name: \(name))") { db in
            let id = try Int64.fetchOne(db, sql: """
                INSERT INTO catalog_board (client, name, description, public, created_at)
                SELECT :client, :name, :description, :public, :at
                WHERE NOT EXISTS (SELECT 1 FROM catalog_board WHERE client = :client AND name = :name)
                  AND (SELECT COUNT(*) FROM catalog_board WHERE client = :client) < :max
                RETURNING id
                """, arguments: arguments)
            guard let id else {
                let taken = try Bool.fetchOne(db, sql: """
                    SELECT EXISTS (SELECT 1 FROM catalog_board WHERE client = :client AND name = :name)
                    """, arguments: arguments)!
                return taken ? .nameTaken : .tooManyBoards
            }
            return .created(try Self.board(id: id, in: db)!)
        }
    }

    public func updateBoard(client: String, id: Int64, name: String?, description: String?,
                            isPublic: Bool?) async throws -> UpdateBoardOutcome {
        let arguments: StatementArguments = [
            "client": client, "id": id, "name": name, "description": description, "public": isPublic,
        ]
        return try await write("updateBoard(client: \(client), id: \(id))") { db in
            try db.execute(sql: """
                UPDATE catalog_board SET
                    name = COALESCE(:name, name),
                    description = COALESCE(:description, description),
                    public = COALESCE(:public, public)
                WHERE id = :id AND client = :client
                  AND NOT EXISTS (SELECT 1 FROM catalog_board b
                                  WHERE b.client = :client AND b.name = :name AND b.id <> :id)
                """, arguments: arguments)
            if db.changesCount > 0 { return .updated(try Self.board(id: id, in: db)!) }
            let exists = try Bool.fetchOne(db, sql: """
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

    public func addToBoard(client: String, id: Int64, symbols: [String], maxItems: Int) async throws -> BoardAddOutcome? {
        let symbols = Self.unique(symbols)
        do {
            return try await addToBoardOnce(client: client, id: id, symbols: symbols, maxItems: maxItems)
        } catch let error as StoreError where error.underlying is BoardFull {
            return BoardAddOutcome(added: [], alreadyPresent: [], tooMany: true)
        }
    }

    private func addToBoardOnce(client: String, id: Int64, symbols: [String], maxItems: Int) async throws -> BoardAddOutcome? {
        try await write("addToBoard(client: \(client), id: \(id))") { db in
            guard try Self.owns(client, board: id, in: db) else { return nil }
            let unknown = try symbols.filter { symbol in
                try !Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM species WHERE symbol = ?)", arguments: [symbol])!
            }
            if !unknown.isEmpty { return BoardAddOutcome(added: [], alreadyPresent: [], unknown: unknown) }
            let insert = try db.cachedStatement(sql: """
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
                } else if try Bool.fetchOne(db, sql: """
                    SELECT EXISTS (SELECT 1 FROM catalog_board_item WHERE board_id = ? AND symbol = ?)
                    """, arguments: [id, symbol])! {
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
            guard let row = try Row.fetchOne(db, sql: """
                \(Self.boardSelect)
                WHERE b.id = :id AND (b.client = :viewer OR b.public = 1) AND (:owner IS NULL OR b.client = :owner)
                """, arguments: ["id": id, "viewer": viewer, "owner": owner]) else { return nil }
            let species = try Row.fetchAll(db, sql: """
                SELECT \(Self.speciesColumns("s")) FROM catalog_board_item i JOIN species s ON s.symbol = i.symbol
                WHERE i.board_id = ? ORDER BY i.position
                """, arguments: [id]).map(Self.species(from:))
            return BoardDetail(board: Self.board(from: row), species: species)
        }
    }

    public func linkPlant(plant: String, symbol: String, at: Date) async throws -> LinkOutcome {
        let arguments: StatementArguments = ["plant": plant, "symbol": symbol, "at": at.storeMilliseconds]
        return try await write("linkPlant(plant: \(plant), symbol: \(symbol))") { db in
            try db.execute(sql: """
                INSERT INTO catalog_plant_link (plant, symbol, linked_at)
                SELECT :plant, :symbol, :at
                WHERE EXISTS (SELECT 1 FROM plant WHERE name = :plant)
                  AND EXISTS (SELECT 1 FROM species WHERE symbol = :symbol)
                ON CONFLICT (plant) DO UPDATE SET symbol = excluded.symbol, linked_at = excluded.linked_at
                """, arguments: arguments)
            if db.changesCount > 0 {
                // Alerts were judged against the old species; the caller evaluates afresh.
                try db.execute(sql: "DELETE FROM catalog_alert WHERE plant = :plant", arguments: arguments)
                return .linked
            }
            let plantExists = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM plant WHERE name = :plant)",
                                                arguments: arguments)!
            return plantExists ? .unknownSpecies : .unknownPlant
        }
    }

    public func unlinkPlant(plant: String) async throws -> Bool {
        try await write("unlinkPlant(plant: \(plant))") { db in
            try db.execute(sql: "DELETE FROM catalog_plant_link WHERE plant = ?", arguments: [plant])
            return db.changesCount > 0
        }
    }

    public func linkedPlants(sensor: String) async throws -> [LinkedPlant] {
        await buffer.drain()
        return try await read("linkedPlants(sensor: \(sensor))") { db in
            let names = try String.fetchAll(db, sql: """
                SELECT l.plant FROM plant_sensor ps
                JOIN plant p ON p.id = ps.plant_id
                JOIN catalog_plant_link l ON l.plant = p.name
                WHERE ps.sensor = ? ORDER BY l.plant
                """, arguments: [sensor])
            return try names.compactMap { try Self.linkedPlant($0, in: db) }
        }
    }

    public func linkedPlant(plant: String) async throws -> LinkedPlant? {
        await buffer.drain()
        return try await read("linkedPlant(plant: \(plant))") { db in try Self.linkedPlant(plant, in: db) }
    }

    public func updateCareAlerts(plant: String, conditions: [CareCondition], at: Date) async throws -> CareAlertUpdate {
        let at = at.storeMilliseconds
        let conditions = conditions.map { AlertRow(sensor: $0.sensor, kind: $0.kind.rawValue, value: $0.value, limit: $0.limit) }
        return try await write("updateCareAlerts(plant: \(plant))") { db in
            var changed = false
            let start = try db.cachedStatement(sql: """
                INSERT INTO catalog_alert (plant, sensor, kind, value, limit_value, since)
                SELECT :plant, :sensor, :kind, :value, :limit, :at
                WHERE EXISTS (SELECT 1 FROM catalog_plant_link WHERE plant = :plant)
                ON CONFLICT (plant, sensor, kind) DO NOTHING
                """)
            let refresh = try db.cachedStatement(sql: """
                UPDATE catalog_alert SET value = :value, limit_value = :limit
                WHERE plant = :plant AND sensor = :sensor AND kind = :kind
                """)
            for condition in conditions {
                let arguments: StatementArguments = [
                    "plant": plant, "sensor": condition.sensor, "kind": condition.kind,
                    "value": condition.value, "limit": condition.limit, "at": at,
                ]
                try start.execute(arguments: arguments)
                if db.changesCount > 0 { changed = true } else { try refresh.execute(arguments: arguments) }
            }
            // `kind:sensor` is unambiguous: a kind is one of three words without a colon.
            let keep = conditions.map { $0.kind + ":" + $0.sensor }
            var arguments: StatementArguments = [plant]
            var sql = "DELETE FROM catalog_alert WHERE plant = ?"
            if !keep.isEmpty {
                sql += " AND (kind || ':' || sensor) NOT IN (\(Array(repeating: "?", count: keep.count).joined(separator: ", ")))"
                arguments += StatementArguments(keep)
            }
            try db.execute(sql: sql, arguments: arguments)
            if db.changesCount > 0 { changed = true }
            let alerts = try Row.fetchAll(db, sql: """
                SELECT sensor, kind, value, limit_value, since FROM catalog_alert WHERE plant = ?
                ORDER BY sensor, CASE kind WHEN 'dry' THEN 0 WHEN 'wet' THEN 1 ELSE 2 END
                """, arguments: [plant]).compactMap { row -> CareAlert? in
                guard let kind = CareAlertKind(rawValue: row["kind"]) else { return nil }
                return CareAlert(kind: kind, sensor: row["sensor"], value: row["value"], limit: row["limit_value"],
                                 since: Date(storeMilliseconds: row["since"]))
            }
            return CareAlertUpdate(alerts: alerts, changed: changed)
        }
    }

    // MARK: - Helpers

    /// The columns a species is read from, optionally qualified by a table alias.
    static func speciesColumns(_ alias: String) -> String {
        ["symbol", "scientific_name", "common_name", "moisture_use", "shade_tolerance", "min_temp_f", "image_url"]
            .map { "\(alias).\($0)" }.joined(separator: ", ")
    }

    static let speciesColumns = "symbol, scientific_name, common_name, moisture_use, shade_tolerance, min_temp_f, image_url"

    static func species(from row: Row) -> Species {
        Species(symbol: row["symbol"], scientificName: row["scientific_name"], commonName: row["common_name"],
                moistureUse: MoistureUse(rawValue: row["moisture_use"]) ?? .medium,
                shadeTolerance: ShadeTolerance(rawValue: row["shade_tolerance"]) ?? .intermediate,
                minTempF: row["min_temp_f"], imageURL: row["image_url"])
    }

    /// The search as SQL: only the filters given become conditions, so the planner can use the
    /// index that fits; the seed's order is `shuffle XOR mask` (`(a | b) - (a & b)`, as SQLite has
    /// no XOR operator), with the symbol breaking ties.
    static func searchSQL(_ search: CatalogSearch) -> (String, StatementArguments) {
        var conditions: [String] = []
        var arguments: [String: (any DatabaseValueConvertible)?] = [
            "mask": CatalogShuffle.mask(seed: search.seed), "limit": max(0, search.limit) + 1,
        ]
        let filter = search.filter
        if let moisture = filter.moisture {
            conditions.append("moisture_use = :moisture")
            arguments["moisture"] = moisture.rawValue
        }
        if let shade = filter.shade {
            conditions.append("shade_tolerance = :shade")
            arguments["shade"] = shade.rawValue
        }
        if let range = filter.minTemp {
            conditions.append("min_temp_f >= :lower AND min_temp_f \(range.includesUpper ? "<=" : "<") :upper")
            arguments["lower"] = range.lower
            arguments["upper"] = range.upper
        }
        if let name = filter.name {
            conditions.append("instr(search_name, :name) > 0")
            arguments["name"] = name
        }
        if search.unseenOnly, let client = search.client {
            conditions.append("NOT EXISTS (SELECT 1 FROM catalog_seen c WHERE c.client = :client AND c.symbol = species.symbol)")
            arguments["client"] = client
        }
        var outer = ""
        if let after = search.after {
            outer = "WHERE sort_key > :after_key OR (sort_key = :after_key AND symbol > :after_symbol)"
            arguments["after_key"] = after.key
            arguments["after_symbol"] = after.symbol
        }
        let sql = """
            SELECT * FROM (
                SELECT \(speciesColumns), (shuffle | :mask) - (shuffle & :mask) AS sort_key FROM species
                \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "))
            ) AS matches
            \(outer)
            ORDER BY sort_key, symbol LIMIT :limit
            """
        return (sql, StatementArguments(arguments))
    }

    private static func upsert(_ rows: [SpeciesRow], in db: Database) throws {
        let statement = try db.cachedStatement(sql: """
            INSERT INTO species (symbol, scientific_name, common_name, moisture_use, shade_tolerance,
                                 min_temp_f, image_url, search_name, shuffle)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (symbol) DO UPDATE SET
                scientific_name = excluded.scientific_name, common_name = excluded.common_name,
                moisture_use = excluded.moisture_use, shade_tolerance = excluded.shade_tolerance,
                min_temp_f = excluded.min_temp_f, image_url = COALESCE(excluded.image_url, species.image_url),
                search_name = excluded.search_name
            """)
        for row in rows {
            let species = row.species
            try statement.execute(arguments: [
                species.symbol, species.scientificName, species.commonName, species.moistureUse.rawValue,
                species.shadeTolerance.rawValue, species.minTempF, species.imageURL, species.searchName,
                CatalogShuffle.symbolHash(species.symbol),
            ])
        }
    }

    private static let boardSelect = """
        SELECT b.id, b.client, b.name, b.description, b.public, b.created_at,
               (SELECT COUNT(*) FROM catalog_board_item i WHERE i.board_id = b.id) AS count
        FROM catalog_board b
        """

    private static func board(from row: Row) -> Board {
        Board(id: row["id"], owner: row["client"], name: row["name"], description: row["description"],
              isPublic: row["public"], count: row["count"], createdAt: Date(storeMilliseconds: row["created_at"]))
    }

    private static func board(id: Int64, in db: Database) throws -> Board? {
        try Row.fetchOne(db, sql: "\(boardSelect) WHERE b.id = ?", arguments: [id]).map(board(from:))
    }

    private static func owns(_ client: String, board id: Int64, in db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM catalog_board WHERE id = ? AND client = ?)",
                          arguments: [id, client])!
    }

    private static func linkedPlant(_ plant: String, in db: Database) throws -> LinkedPlant? {
        guard let row = try Row.fetchOne(db, sql: """
            SELECT \(speciesColumns("s")) FROM catalog_plant_link l JOIN species s ON s.symbol = l.symbol
            WHERE l.plant = ?
            """, arguments: [plant]) else { return nil }
        let readings = try Row.fetchAll(db, sql: """
            SELECT ps.sensor, r.moisture, r.temperature FROM plant p
            JOIN plant_sensor ps ON ps.plant_id = p.id
            JOIN sensor_reading r ON r.sensor = ps.sensor
            WHERE p.name = ? ORDER BY ps.position
            """, arguments: [plant]).map { row in
            CareReading(sensor: row["sensor"], moisture: row["moisture"], temperature: row["temperature"])
        }
        return LinkedPlant(plant: plant, species: species(from: row), readings: readings)
    }

    /// `values` without repeats, in first-seen order.
    private static func unique(_ values: [String]) -> [String] {
        var seen = Set<String>()
        return values.filter { seen.insert($0).inserted }
    }
}

/// A species as a `Sendable` value for a write transaction.
private struct SpeciesRow: Sendable {
    var species: Species
}

/// A care condition as a `Sendable` row for a write transaction.
private struct AlertRow: Sendable {
    var sensor: String
    var kind: String
    var value: Double
    var limit: Double
}

/// Thrown inside a board write to roll it back when the board would hold too many species.
struct BoardFull: Error {}
