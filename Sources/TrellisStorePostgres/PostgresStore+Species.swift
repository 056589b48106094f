import Foundation
import PostgresNIO
import TrellisCore
import TrellisStore

/// The species of ``CatalogStore`` over PostgreSQL: upserts in one transaction, a search in one
/// indexed query.
///
/// Races between relays: an upsert is settled row by row by the primary key (`ON CONFLICT DO
/// UPDATE` locks the row it replaces). Seeding an empty catalog first locks the species table in
/// SHARE ROW EXCLUSIVE mode, which excludes every other writer of `species` (another seed
/// included) until commit, so "only when empty" holds whichever relay seeds first. A search on a
/// client's behalf first takes a transaction-scoped advisory lock on that client, so two searches
/// for one client with `unseenOnly` run one after the other and never show the same species twice.
extension PostgresStore {
    /// Species written per statement: each row binds its values through arrays, so a large import
    /// takes few round trips.
    static let speciesBatchSize = 1_000

    @discardableResult
    public func upsertSpecies(_ species: [Species]) async throws -> Int {
        let count = species.count
        let rows = Self.mergedBySymbol(species)
        let logger = self.logger
        return try await write("upsertSpecies(\(count) species)") { connection in
            try await Self.upsert(rows, on: connection, logger: logger)
            return count
        }
    }

    @discardableResult
    public func seedCatalogIfEmpty(_ species: [Species]) async throws -> Int {
        let count = species.count
        let rows = Self.mergedBySymbol(species)
        let logger = self.logger
        return try await write("seedCatalogIfEmpty(\(count) species)") { connection in
            try await connection.query("LOCK TABLE species IN SHARE ROW EXCLUSIVE MODE", logger: logger)
            let any =
                try await connection.query("SELECT EXISTS (SELECT 1 FROM species)", logger: logger)
                .decode(Bool.self).gathered().first ?? false
            guard !any else { return 0 }
            try await Self.upsert(rows, on: connection, logger: logger)
            return count
        }
    }

    public func speciesCount() async throws -> Int {
        let logger = self.logger
        return try await read("speciesCount()") { connection in
            Int(
                try await connection.query("SELECT count(*) FROM species", logger: logger)
                    .decode(Int64.self).gathered().first ?? 0)
        }
    }

    public func species(symbol: String) async throws -> Species? {
        let logger = self.logger
        return try await read("species(symbol: \(symbol))") { connection in
            try await Self.species(
                connection.query(
                    "SELECT \(unescaped: Species.storedColumns("s")) FROM species s WHERE s.symbol = \(symbol)",
                    logger: logger)
            ).first
        }
    }

    public func searchSpecies(_ search: CatalogSearch) async throws -> CatalogSearchPage {
        let query = try Self.searchQuery(search)
        let limit = max(0, search.limit)
        let seed = search.seed
        let logger = self.logger
        let body: @Sendable (PostgresConnection) async throws -> CatalogSearchPage = { connection in
            if let client = search.client {
                try await connection.query(
                    "SELECT pg_advisory_xact_lock(hashtext('catalog_seen'), hashtext(\(client)))", logger: logger)
            }
            var rows: [(species: Species, key: Int64)] = []
            for try await (symbol, scientific, common, moisture, shade, minTemp, image, key)
                in (try await connection.query(
                    query, logger: logger)).decode(
                    (String, String, String, String, String, Double, String?, Int64).self)
            {
                rows.append((Self.species(symbol, scientific, common, moisture, shade, minTemp, image), key))
            }
            let shown = rows.prefix(limit)
            let species = shown.map(\.species)
            if let client = search.client, !species.isEmpty {
                try await connection.query(
                    """
                    INSERT INTO catalog_seen (client, symbol)
                    SELECT \(client), symbol FROM unnest(\(species.map(\.symbol))::text[]) AS shown(symbol)
                    ON CONFLICT DO NOTHING
                    """, logger: logger)
            }
            var next: CatalogCursor?
            if rows.count > limit, let last = shown.last {
                next = CatalogCursor(seed: seed, key: last.key, symbol: last.species.symbol)
            }
            return CatalogSearchPage(species: species, next: next)
        }
        if search.client != nil {
            return try await write("searchSpecies(client: \(search.client ?? ""))", body)
        }
        return try await read("searchSpecies()", body)
    }

    /// A species from its columns, in the order ``Species/storedColumns(_:)`` lists them.
    static func species(
        _ symbol: String, _ scientific: String, _ common: String, _ moisture: String, _ shade: String,
        _ minTemp: Double, _ image: String?
    ) -> Species {
        .stored(
            symbol: symbol, scientificName: scientific, commonName: common, moistureUse: moisture,
            shadeTolerance: shade, minTempF: minTemp, imageURL: image)
    }

    /// Every row of a query selecting ``Species/storedColumns(_:)``.
    static func species(_ rows: PostgresRowSequence) async throws -> [Species] {
        var species: [Species] = []
        for try await (symbol, scientific, common, moisture, shade, minTemp, image)
            in rows.decode((String, String, String, String, String, Double, String?).self)
        {
            species.append(Self.species(symbol, scientific, common, moisture, shade, minTemp, image))
        }
        return species
    }

    /// The search as SQL: only the filters given become conditions, so the planner can use the
    /// index that fits. The seed's order is `shuffle # mask` (XOR; both are 62-bit non-negative,
    /// so the key is too and equals SQLite's `(a | b) - (a & b)`), with the symbol breaking ties,
    /// byte order as in SQLite (the columns are `COLLATE "C"`). The name filter is a substring
    /// test on the lower-case `search_name`, case-sensitive like SQLite's `instr`.
    static func searchQuery(_ search: CatalogSearch) throws -> PostgresQuery {
        var bindings = PostgresBindings()
        func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
            bindings.append(value)
            return "$\(bindings.count)"
        }
        let mask = bind(CatalogShuffle.mask(seed: search.seed))
        var conditions: [String] = []
        let filter = search.filter
        if let moisture = filter.moisture {
            conditions.append("moisture_use = \(bind(moisture.rawValue))")
        }
        if let shade = filter.shade {
            conditions.append("shade_tolerance = \(bind(shade.rawValue))")
        }
        if let range = filter.minTemp {
            conditions.append(
                "min_temp_f >= \(bind(range.lower)) AND min_temp_f \(range.includesUpper ? "<=" : "<") \(bind(range.upper))"
            )
        }
        if let name = filter.name {
            conditions.append("strpos(search_name, \(bind(name))) > 0")
        }
        if search.unseenOnly, let client = search.client {
            conditions.append(
                """
                NOT EXISTS (SELECT 1 FROM catalog_seen c WHERE c.client = \(bind(client)) AND c.symbol = species.symbol)
                """)
        }
        var outer = ""
        if let after = search.after {
            let key = bind(after.key)
            outer = "WHERE sort_key > \(key) OR (sort_key = \(key) AND symbol > \(bind(after.symbol)))"
        }
        let sql = """
            SELECT * FROM (
                SELECT \(Species.storedColumns("species")), shuffle # \(mask) AS sort_key FROM species
                \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "))
            ) AS matches
            \(outer)
            ORDER BY sort_key, symbol LIMIT \(bind(Int64(max(0, search.limit)) + 1))
            """
        return PostgresQuery(unsafeSQL: sql, binds: bindings)
    }

    /// `species` with one entry per symbol, as inserting them one after the other leaves the
    /// table: the last entry of a symbol wins, but an absent image URL keeps an earlier one.
    static func mergedBySymbol(_ species: [Species]) -> [Species] {
        var index: [String: Int] = [:]
        var merged: [Species] = []
        for item in species {
            if let position = index[item.symbol] {
                let earlierImage = merged[position].imageURL
                merged[position] = item
                if item.imageURL == nil { merged[position].imageURL = earlierImage }
            } else {
                index[item.symbol] = merged.count
                merged.append(item)
            }
        }
        return merged
    }

    /// Inserts or replaces `rows` (distinct symbols), ``speciesBatchSize`` per statement.
    private static func upsert(_ rows: [Species], on connection: PostgresConnection, logger: Logger) async throws {
        var start = 0
        while start < rows.count {
            let batch = rows[start..<min(start + speciesBatchSize, rows.count)]
            start += batch.count
            try await connection.query(
                """
                INSERT INTO species (symbol, scientific_name, common_name, moisture_use, shade_tolerance,
                                     min_temp_f, image_url, search_name, shuffle)
                SELECT symbol, scientific_name, common_name, moisture_use, shade_tolerance, min_temp_f,
                       CASE WHEN has_image THEN image_url END, search_name, shuffle
                FROM unnest(\(batch.map(\.symbol))::text[], \(batch.map(\.scientificName))::text[],
                            \(batch.map(\.commonName))::text[], \(batch.map(\.moistureUse.rawValue))::text[],
                            \(batch.map(\.shadeTolerance.rawValue))::text[], \(batch.map(\.minTempF))::float8[],
                            \(batch.map { $0.imageURL ?? "" })::text[], \(batch.map { $0.imageURL != nil })::boolean[],
                            \(batch.map(\.searchName))::text[], \(batch.map { CatalogShuffle.symbolHash($0.symbol) })::bigint[])
                    AS incoming(symbol, scientific_name, common_name, moisture_use, shade_tolerance, min_temp_f,
                                image_url, has_image, search_name, shuffle)
                ON CONFLICT (symbol) DO UPDATE SET
                    scientific_name = excluded.scientific_name, common_name = excluded.common_name,
                    moisture_use = excluded.moisture_use, shade_tolerance = excluded.shade_tolerance,
                    min_temp_f = excluded.min_temp_f, image_url = COALESCE(excluded.image_url, species.image_url),
                    search_name = excluded.search_name
                """, logger: logger)
        }
    }
}
