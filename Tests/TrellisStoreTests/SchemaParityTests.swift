import Foundation
import Testing
@testable import TrellisStore
@testable import TrellisStorePostgres
@testable import TrellisStoreSQLite
import TrellisTestSupport

/// The two backends keep the same tables with the same columns, as their databases report them,
/// apart from the differences named here with their reason; and the table catalog the state dump
/// and `trellis store copy` use (``StateDump/tables``) names tables both have. A table or column
/// added to one backend and not the other fails this test.
@Suite(
    "Schema parity between SQLite and PostgreSQL",
    .enabled(if: PostgresTestServer.isRequired, "needs TRELLIS_TEST_POSTGRES_URL"))
struct SchemaParityTests {
    /// Columns only one backend has, each with why. Keys are `table.column`, or `table` for a
    /// whole table.
    static let onlySQLite: [String: String] = [
        "store_probe.id": "SQLite's one writer keeps one probe row; PostgreSQL keeps one per relay, keyed by owner"
    ]
    static let onlyPostgres: [String: String] = [
        "delivery.owner":
            "delivery marks belong to one relay's broker session; relays sharing a database keep theirs apart",
        "store_probe.owner": "one write-check row per relay sharing the database",
        "spam_sender":
            "the spam windows relays sharing a database count together; SQLite's one relay counts in memory (LocalSpamLedger)",
        "trellis_migration":
            "PostgreSQL's migration log; SQLite's is GRDB's grdb_migrations, left out of the comparison",
        "trellis_version":
            "the change versions the relays' read caches compare (PostgresReadCache); one SQLite relay needs none"
    ]

    /// `table` for every table and `table.column` for every column of `schema`.
    static func names(_ schema: [String: [String]]) -> Set<String> {
        var names = Set(schema.keys)
        for (table, columns) in schema { for column in columns { names.insert("\(table).\(column)") } }
        return names
    }

    @Test("every table and column of one backend exists in the other, but for the named differences")
    func sameTablesAndColumns() async throws {
        let memory = try SQLiteStore.inMemory()
        let sqlite = try await memory.schemaColumns()
        try await memory.close()
        let postgres = try await PostgresTestServer.withDatabase { url in
            let store = try await PostgresStore.connect(url, owner: "schema-parity")
            let columns = try await store.schemaColumns()
            try await store.close()
            return columns
        }
        let (a, b) = (Self.names(sqlite), Self.names(postgres))
        // A whole table only in one backend is named once, by the table.
        func unexplained(_ only: Set<String>, _ allowed: [String: String]) -> [String] {
            only.filter { name in
                let table = String(name.split(separator: ".")[0])
                return allowed[name] == nil && allowed[table] == nil
            }.sorted()
        }
        #expect(unexplained(a.subtracting(b), Self.onlySQLite) == [], "in SQLite only")
        #expect(unexplained(b.subtracting(a), Self.onlyPostgres) == [], "in PostgreSQL only")
        // The named differences are still differences.
        for name in Self.onlySQLite.keys.sorted() { #expect(a.contains(name) && !b.contains(name), "\(name)") }
        for name in Self.onlyPostgres.keys.sorted() { #expect(b.contains(name) && !a.contains(name), "\(name)") }
        for table in StateDump.tables {
            #expect(
                sqlite[table] != nil && postgres[table] != nil, "the dump's table \(table) is missing from a backend")
            #expect(sqlite[table] == postgres[table], "\(table): columns in another order")
        }
    }
}
