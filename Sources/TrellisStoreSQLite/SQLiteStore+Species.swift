import Foundation
import GRDB
import TrellisCore
import TrellisStore

/// The species of ``CatalogStore`` over SQLite: they are upserted in one write transaction,
/// and a search reads its page from one index (see `searchSQL`).
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
            try Row.fetchOne(
                db, sql: "SELECT \(Species.storedColumns()) FROM species WHERE symbol = ?",
                arguments: [symbol]
            ).map(Self.species(from:))
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
                let remember = try db.cachedStatement(
                    sql: """
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

    /// The species of a row selecting ``Species/storedColumns(_:)``.
    static func species(from row: Row) -> Species {
        .stored(
            symbol: row["symbol"], scientificName: row["scientific_name"], commonName: row["common_name"],
            moistureUse: row["moisture_use"], shadeTolerance: row["shade_tolerance"],
            minTempF: row["min_temp_f"], imageURL: row["image_url"])
    }

    /// The search as SQL: only the filters given become conditions, so the planner can use the
    /// index that fits; the seed's order is `shuffle XOR mask` (`(a | b) - (a & b)`, as SQLite has
    /// no XOR operator), with the symbol breaking ties.
    ///
    /// With a filter, two steps: the inner query picks the page's symbols from an index alone (each
    /// filter's index holds `shuffle` and `search_name` too,
    /// ``StoreSchema/createCatalogCoveringIndexes(_:)``), and only the page's rows are read from the
    /// table. Reading every match's row to sort them was four fifths of a search with all filters
    /// over 50,000 species.
    static func searchSQL(_ search: CatalogSearch) -> (String, StatementArguments) {
        var conditions: [String] = []
        var arguments: [String: (any DatabaseValueConvertible)?] = [
            "mask": CatalogShuffle.mask(seed: search.seed), "limit": max(0, search.limit) + 1
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
            conditions.append(
                "NOT EXISTS (SELECT 1 FROM catalog_seen c WHERE c.client = :client AND c.symbol = species.symbol)")
            arguments["client"] = client
        }
        var outer = ""
        if let after = search.after {
            outer = "WHERE sort_key > :after_key OR (sort_key = :after_key AND symbol > :after_symbol)"
            arguments["after_key"] = after.key
            arguments["after_symbol"] = after.symbol
        }
        let sortKey = "(shuffle | :mask) - (shuffle & :mask) AS sort_key"
        // The page: sort keys of the matches, then the first `limit` of them after the cursor.
        func page(of columns: String, _ filter: String) -> String {
            """
            SELECT * FROM (SELECT \(columns), \(sortKey) FROM species \(filter)) AS matches
            \(outer)
            ORDER BY sort_key, symbol LIMIT :limit
            """
        }
        // No filter: every row is a match, and one pass over the table sorts them as fast.
        let sql =
            conditions.isEmpty
            ? page(of: Species.storedColumns(), "")
            : """
            SELECT \(Species.storedColumns("species")), page.sort_key
            FROM (\(page(of: "symbol", "WHERE " + conditions.joined(separator: " AND ")))) AS page
            JOIN species ON species.symbol = page.symbol
            ORDER BY page.sort_key, page.symbol
            """
        return (sql, StatementArguments(arguments))
    }

    private static func upsert(_ rows: [SpeciesRow], in db: Database) throws {
        let statement = try db.cachedStatement(
            sql: """
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
                CatalogShuffle.symbolHash(species.symbol)
            ])
        }
    }
}

/// A species as a `Sendable` value for a write transaction.
private struct SpeciesRow: Sendable {
    var species: Species
}

extension StoreSchema {
    /// The catalog's filter indexes, each extended with `shuffle` and `search_name`: a search finds
    /// its page's symbols, sorted by the seed's order, in the index alone
    /// (``SQLiteStore/searchSQL(_:)``), and reads from the table only the rows it returns.
    static func createCatalogCoveringIndexes(_ db: Database) throws {
        try db.execute(
            sql: """
                DROP INDEX species_by_needs;
                CREATE INDEX species_by_needs ON species(moisture_use, shade_tolerance, min_temp_f, shuffle, search_name);
                DROP INDEX species_by_shade;
                CREATE INDEX species_by_shade ON species(shade_tolerance, min_temp_f, shuffle, search_name);
                DROP INDEX species_by_min_temp;
                CREATE INDEX species_by_min_temp ON species(min_temp_f, shuffle, search_name);
                DROP INDEX species_by_search_name;
                CREATE INDEX species_by_search_name ON species(search_name, shuffle);
                """)
    }
}
