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
            try StateDump(tables: StateDump.tables.map { name in
                let rows = try Row.fetchAll(db, sql: "SELECT * FROM \(name) ORDER BY \(StateDump.keys[name] ?? "rowid")")
                let columns = try rows.first.map { Array($0.columnNames) } ?? db.columns(in: name).map(\.name)
                return StateDump.Table(name: name, columns: columns, rows: rows.map { row in
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
