import PostgresNIO
import TrellisCore
import TrellisStore

extension PostgresStore: SchemaDescribing {
    /// Every table of the store's schema with its columns, from `information_schema`.
    public func schemaColumns() async throws -> [String: [String]] {
        let logger = self.logger
        return try await read("schemaColumns()") { connection in
            var tables: [String: [String]] = [:]
            for try await (table, column) in try await connection.query(
                """
                SELECT table_name::text, column_name::text FROM information_schema.columns
                WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position
                """, logger: logger
            ).decode((String, String).self) {
                tables[table, default: []].append(column)
            }
            return tables
        }
    }
}
