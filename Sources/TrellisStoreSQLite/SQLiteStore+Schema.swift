import GRDB
import TrellisCore
import TrellisStore

extension SQLiteStore: SchemaDescribing {
    /// Every table but SQLite's own (`sqlite_*`) and GRDB's migration log, with its columns.
    public func schemaColumns() async throws -> [String: [String]] {
        try await read("schemaColumns()") { db in
            let names = try String.fetchAll(
                db,
                sql: """
                    SELECT name FROM sqlite_master WHERE type = 'table'
                    AND name NOT LIKE 'sqlite_%' AND name <> 'grdb_migrations'
                    """)
            var tables: [String: [String]] = [:]
            for name in names { tables[name] = try db.columns(in: name).map(\.name) }
            return tables
        }
    }
}
