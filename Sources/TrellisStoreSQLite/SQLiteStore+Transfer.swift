import Foundation
import GRDB
import TrellisCore
import TrellisStore

/// ``StateExporting`` over SQLite: every table read in one read transaction, so the dump is one
/// consistent moment of the state.
extension SQLiteStore: StateExporting {
    public func exportState() async throws -> StateDump {
        try await flush()
        return try await read("exportState()") { db in
            try StateDump(
                tables: StateDump.tables.map { name in
                    let rows = try Row.fetchAll(
                        db, sql: "SELECT * FROM \(name) ORDER BY \(StateDump.keys[name] ?? "rowid")")
                    let columns = try rows.first.map { Array($0.columnNames) } ?? db.columns(in: name).map(\.name)
                    return StateDump.Table(
                        name: name, columns: columns,
                        rows: rows.map { row in
                            columns.map { column in Self.dumpValue(row[column] as DatabaseValue) }
                        })
                })
        }
    }

    /// A column's value as a ``DumpValue``.
    static func dumpValue(_ value: DatabaseValue) -> DumpValue {
        switch value.storage {
        case .null: .null
        case let .int64(number): .integer(number)
        case let .double(number): .real(number)
        case let .string(text): .text(text)
        case let .blob(data): .blob([UInt8](data))
        }
    }
}

/// ``StateImporting`` over SQLite, so a state can come back from PostgreSQL to one relay on SQLite
/// (`trellis store copy --from postgres://… --to DIR`): every table written in one write
/// transaction, children emptied before their parents when replacing.
extension SQLiteStore: StateImporting {
    public func nonEmptyTables() async throws -> [String] {
        try await flush()
        return try await read("nonEmptyTables()") { db in
            try StateDump.tables.filter { name in
                try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(name))") ?? false
            }
        }
    }

    public func importState(_ dump: StateDump, replacing: Bool) async throws {
        try await flush()
        try await write("importState(\(dump.tables.count) tables)") { db in
            if replacing {
                for name in StateDump.tables.reversed() { try db.execute(sql: "DELETE FROM \(name)") }
            }
            for table in dump.tables where !table.rows.isEmpty {
                let known = Set(try db.columns(in: table.name).map(\.name))
                if let missing = table.columns.first(where: { !known.contains($0) }) {
                    throw StoreError(
                        code: .operationFailed, message: "the target has no column \(table.name).\(missing)")
                }
                let placeholders = Array(repeating: "?", count: table.columns.count).joined(separator: ", ")
                let insert = try db.cachedStatement(
                    sql: "INSERT INTO \(table.name) (\(table.columns.joined(separator: ", "))) VALUES (\(placeholders))"
                )
                for row in table.rows {
                    try insert.execute(arguments: StatementArguments(row.map(Self.databaseValue)))
                }
            }
        }
    }

    /// A ``DumpValue`` as SQLite stores it (flags as 0 and 1).
    static func databaseValue(_ value: DumpValue) -> DatabaseValue {
        switch value {
        case .null: .null
        case let .integer(number): number.databaseValue
        case let .real(number): number.databaseValue
        case let .text(text): text.databaseValue
        case let .blob(bytes): Data(bytes).databaseValue
        case let .boolean(flag): (flag ? 1 : 0).databaseValue
        }
    }
}
