import Foundation
import NIOCore
import PostgresNIO
import TrellisCore
import TrellisStore

/// ``StateImporting`` over PostgreSQL: a dump is read in one REPEATABLE READ transaction and
/// written in one transaction, in chunks of multi-row `INSERT`s whose values are converted to each
/// column's type (SQLite's 0/1 flags become booleans). The identity counters then move past the
/// copied ids, so the next plant, board or model gets a fresh one.
extension PostgresStore: StateImporting {
    public func exportState() async throws -> StateDump {
        try await flush()
        let logger = self.logger
        return try await Self.transaction(
            client, logger: logger, operation: "exportState()", within: Self.transferLimit
        ) { connection in
            try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            // Each table is converted while the transaction waits: a large one takes longer than the
            // idle limit, and a read-only snapshot holds no lock a relay waits on.
            try await connection.query("SET LOCAL idle_in_transaction_session_timeout = 0", logger: logger)
            var tables: [StateDump.Table] = []
            for name in StateDump.tables {
                let columns = try await Self.columnTypes(of: name, on: connection, logger: logger).map(\.name)
                let key = StateDump.keys[name] ?? "1"
                let rows = try await connection.rows(
                    PostgresQuery(unsafeSQL: "SELECT \(columns.joined(separator: ", ")) FROM \(name) ORDER BY \(key)"),
                    logger: logger)
                tables.append(
                    StateDump.Table(
                        name: name, columns: columns,
                        rows: try rows.map { row in
                            try row.map(Self.dumpValue)
                        }))
            }
            return StateDump(tables: tables)
        }
    }

    public func nonEmptyTables() async throws -> [String] {
        let logger = self.logger
        return try await read("nonEmptyTables()") { connection in
            var tables: [String] = []
            for name in StateDump.tables
            where try await !connection.rows(
                PostgresQuery(unsafeSQL: "SELECT 1 FROM \(name) LIMIT 1"), logger: logger
            ).isEmpty {
                tables.append(name)
            }
            return tables
        }
    }

    public func importState(_ dump: StateDump, replacing: Bool) async throws {
        let logger = self.logger
        try await write("importState(\(dump.tables.count) tables)", within: Self.transferLimit) { connection in
            if replacing {
                let all = StateDump.tables.joined(separator: ", ")
                try await connection.query(PostgresQuery(unsafeSQL: "TRUNCATE \(all) RESTART IDENTITY"), logger: logger)
            }
            for table in dump.tables {
                try await Self.insert(table, on: connection, logger: logger)
            }
            for name in StateDump.generatedIDs.sorted() {
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: """
                            SELECT setval(pg_get_serial_sequence('\(name)', 'id'), coalesce((SELECT max(id) FROM \(name)), 0) + 1, false)
                            """), logger: logger)
            }
        }
    }

    /// A table's columns and their types, in the table's order.
    static func columnTypes(of table: String, on connection: PostgresConnection, logger: Logger) async throws -> [(
        name: String, type: String
    )] {
        var columns: [(String, String)] = []
        for try await (name, type) in try await connection.query(
            """
            SELECT column_name::text, data_type::text FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name = \(table) ORDER BY ordinal_position
            """, logger: logger
        ).decode((String, String).self) {
            columns.append((name, type))
        }
        return columns
    }

    /// Inserts `table`'s rows, up to 500 per statement.
    private static func insert(_ table: StateDump.Table, on connection: PostgresConnection, logger: Logger) async throws
    {
        guard !table.rows.isEmpty else { return }
        let types = Dictionary(
            uniqueKeysWithValues: try await columnTypes(of: table.name, on: connection, logger: logger))
        for column in table.columns where types[column] == nil {
            throw StoreError(code: .operationFailed, message: "the target has no column \(table.name).\(column)")
        }
        let columnList = table.columns.joined(separator: ", ")
        var start = 0
        while start < table.rows.count {
            let chunk = table.rows[start..<min(start + 500, table.rows.count)]
            var bindings = PostgresBindings(capacity: chunk.count * table.columns.count)
            var tuples: [String] = []
            for row in chunk {
                var placeholders: [String] = []
                for (column, value) in zip(table.columns, row) {
                    try bind(value, as: types[column] ?? "text", into: &bindings, column: "\(table.name).\(column)")
                    placeholders.append("$\(bindings.count)")
                }
                tuples.append("(" + placeholders.joined(separator: ", ") + ")")
            }
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: "INSERT INTO \(table.name) (\(columnList)) VALUES \(tuples.joined(separator: ", "))",
                    binds: bindings),
                logger: logger)
            start += chunk.count
        }
    }

    /// Appends `value` converted to the column's `type`.
    private static func bind(_ value: DumpValue, as type: String, into bindings: inout PostgresBindings, column: String)
        throws
    {
        switch (value, type) {
        case (.null, _): bindings.appendNull()
        case let (.boolean(flag), "boolean"): bindings.append(flag)
        case let (.integer(number), "boolean"): bindings.append(number != 0)
        case let (.integer(number), "bigint"): bindings.append(number)
        case let (.integer(number), "integer"): bindings.append(Int32(truncatingIfNeeded: number))
        case let (.integer(number), "double precision"): bindings.append(Double(number))
        case let (.real(number), "double precision"): bindings.append(number)
        case let (.text(text), "text"): bindings.append(text)
        case let (.blob(bytes), "bytea"): bindings.append(ByteBuffer(bytes: bytes))
        default: throw StoreError(code: .operationFailed, message: "cannot store \(value) in \(column) (\(type))")
        }
    }

    /// A cell as a ``DumpValue``, by its column's type.
    static func dumpValue(_ cell: PostgresCell) throws -> DumpValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .bool: return .boolean(try cell.decode(Bool.self))
        case .int8, .int4, .int2: return .integer(try cell.decode(Int64.self))
        case .float8, .float4: return .real(try cell.decode(Double.self))
        case .bytea: return .blob([UInt8](try cell.decode(Data.self)))
        default: return .text(try cell.decode(String.self))
        }
    }
}

extension PostgresStore {
    /// How long copying the whole state out or in may take: far longer than a statement of the handling.
    static let transferLimit: Duration = .seconds(3600)
}
