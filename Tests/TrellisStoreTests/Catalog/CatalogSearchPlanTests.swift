import GRDB
import Testing
import TrellisCore
@testable import TrellisStore
@testable import TrellisStoreSQLite
import TrellisTestSupport

/// How SQLite carries out a filtered catalog search: the page is chosen from one index alone, and
/// only its rows are read from the table (``SQLiteStore/searchSQL(_:)``). What the search returns
/// is checked against the pure filter in ``CatalogStoreTests``; this checks how it is found.
@Suite("Catalog search plans on SQLite")
struct CatalogSearchPlanTests {
    static let cold = TemperatureRange(lower: -17, upper: 23, includesUpper: false)

    @Test(
        "a filtered search sorts from a covering index and reads only the page's rows",
        arguments: [
            CatalogFilter(moisture: .medium, shade: .intermediate, minTemp: cold, name: "fern"),
            CatalogFilter(moisture: .high),
            CatalogFilter(shade: .tolerant, minTemp: cold),
            CatalogFilter(minTemp: cold),
            CatalogFilter(name: "fern")
        ])
    func coveringIndex(_ filter: CatalogFilter) async throws {
        try await withSQLiteStore(.inMemory) { store async throws in
            for after in [nil, CatalogCursor(seed: 3, key: 42, symbol: "AB")] as [CatalogCursor?] {
                let (sql, arguments) = SQLiteStore.searchSQL(
                    CatalogSearch(filter: filter, seed: 3, after: after, limit: 20))
                let plan = try await store.writer.read { db in
                    try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map {
                        $0["detail"] as String
                    }
                }
                #expect(plan.contains { $0.contains("USING COVERING INDEX species_by_") }, "\(plan)")
                #expect(plan.contains("SEARCH species USING PRIMARY KEY (symbol=?)"), "\(plan)")
                #expect(!plan.contains { $0.hasPrefix("SCAN species") && !$0.contains("COVERING INDEX") }, "\(plan)")
            }
        }
    }
}
