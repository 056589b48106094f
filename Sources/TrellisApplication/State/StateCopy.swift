import Logging
import TrellisStore

/// `trellis store copy`: a whole state read from one place in one transaction and written into
/// another in one, every id kept, then read back and compared. An SQLite target is written alone
/// (refused while a relay runs on it); a PostgreSQL one beside relays not started yet.
package enum StateCopy {
    /// Copies the state at `source` (a state directory or a `postgres://` URL) into `target`, which is
    /// refused when it already holds a state unless `replacing`. Returns the rows copied per table, and
    /// the two places as messages name them (a URL without its password). Every refusal is a
    /// ``CommandFailure``, and nothing was copied.
    package static func copy(from source: String, to target: String, replacing: Bool) async throws -> (
        rows: [(table: String, rows: Int)], source: StatePlace, target: StatePlace
    ) {
        guard target != source else { throw fail("--from and --to name the same state") }
        let logger = Logger(label: "trellis.store")
        do {
            let from = try StatePlace(naming: source), to = try StatePlace(naming: target)
            let dump = try await from.withStore(.read, owner: "trellis-store-copy", logger: logger) { store in
                try await transferring(store, at: from).exportState()
            }
            let use: StateUse = if case .sqlite = to { .changeAlone } else { .changeBesideRelays }
            try await to.withStore(use, owner: "trellis-store-copy", logger: logger) { store in
                try await write(
                    dump, into: try transferring(store, at: to), named: to.description, replacing: replacing)
            }
            return (dump.rowCounts, from, to)
        } catch let error as StateAccessError {
            throw fail("\(error). Nothing was copied")
        } catch {
            throw fail("\(error)")
        }
    }

    /// `store` as a whole state to read and write; every store kind is one.
    static func transferring(_ store: any TrellisStore, at place: StatePlace) throws -> any StateImporting {
        guard let transferring = store as? any StateImporting else {
            throw StoreError(code: .operationFailed, message: "\(place) cannot be copied whole")
        }
        return transferring
    }

    /// Writes `dump` into `store` (refused when it holds a state, unless `replacing`) and checks
    /// that it reads back the same.
    static func write(_ dump: StateDump, into store: any StateImporting, named name: String, replacing: Bool)
        async throws
    {
        let occupied = try await store.nonEmptyTables()
        if !occupied.isEmpty && !replacing {
            throw StoreError(
                code: .operationFailed,
                message: "\(name) already holds a state (rows in "
                    + "\(occupied.joined(separator: ", "))); nothing was copied. Give --replace to empty it first")
        }
        try await store.importState(dump, replacing: replacing)
        let copied = try await store.exportState()
        guard normalized(copied) == normalized(dump) else {
            throw StoreError(code: .operationFailed, message: "\(name) does not read back what was copied")
        }
    }

    /// A dump with booleans as 0 and 1 and columns in name order, so dumps of both stores compare.
    static func normalized(_ dump: StateDump) -> [String: [[String: DumpValue]]] {
        Dictionary(
            uniqueKeysWithValues: dump.tables.map { table in
                (
                    table.name,
                    table.rows.map { row in
                        Dictionary(uniqueKeysWithValues: zip(table.columns, row.map(\.normalized)))
                    }
                )
            })
    }
}
