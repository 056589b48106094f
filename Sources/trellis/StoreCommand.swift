import TrellisApplication
import ArgumentParser
import Foundation
import Logging
import TrellisStore
import TrellisStorePostgres
import TrellisStoreSQLite

/// `trellis store`: moving a state between stores.
struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Back up, restore and move Trellis's state.",
        discussion:
            "See docs/scaling-out.md in the source tree for moving from one relay on SQLite to several on PostgreSQL.",
        subcommands: [Backup.self, Restore.self, Copy.self]
    )

    struct Copy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a whole state into a PostgreSQL store, or from one back into a SQLite state directory.",
            discussion: """
                Copies plants, sensors and readings, buttons with their totals and histories, clients and \
                registrations with their missed counts, dead letters, the catalog with likes, boards, plant links \
                and alerts, and the device fleet with models, builds and logs, keeping every id. Not copied: the \
                delivery marks (each relay's broker session has its own) and the spam windows. The source is read \
                in one transaction and the target written in one: a failed copy writes nothing. \
                Stop every relay on the source first; start the relays on the target once the copy is done. \
                The target is a postgres:// URL (by default state.store, read as `trellis run` reads it), or a state \
                directory (SQLite, made when missing), which is refused while a relay runs on it. A target that already holds a state is refused unless --replace is given, \
                which empties it in the same transaction. Exits 0 after printing the rows copied per table and \
                checking that the target now reads back exactly what was copied; 1 on any failure.
                """
        )

        @Option(
            name: .long,
            help: ArgumentHelp(
                "The state to copy: a state directory (SQLite) or a postgres:// URL.", valueName: "dir|url"))
        var from: String

        @Option(
            name: .long,
            help: ArgumentHelp(
                """
                Where to copy it: a postgres://user[:password]@host[:port]/database[?sslmode=…] URL, or a state \
                directory (SQLite) (default: state.store of the configuration `trellis run` reads, such as \
                TRELLIS_STATE_STORE).
                """, valueName: "url|dir"))
        var to: String?

        @OptionGroup var configFile: ConfigFileOption

        @Flag(name: .long, help: "Empty a target that already holds a state before copying (default: refuse it).")
        var replace = false

        func run() async throws {
            let target: String
            if let to {
                target = to
            } else {
                target = try await configFile.read().string("state.store")
            }
            guard !target.isEmpty else {
                throw fail(
                    "name the target with --to (a postgres:// URL or a state directory), or set state.store (TRELLIS_STATE_STORE)"
                )
            }
            guard target != from else { throw fail("--from and --to name the same state") }
            let logger = Logger(label: "trellis.store")
            do {
                let source = try StatePlace(naming: from), destination = try StatePlace(naming: target)
                let dump = try await source.withStore(.read, owner: "trellis-store-copy", logger: logger) { store in
                    try await Self.transferring(store, at: source).exportState()
                }
                // An SQLite target is written alone; a PostgreSQL one is meant to be empty, its relays not started yet.
                let use: StateUse = if case .sqlite = destination { .changeAlone } else { .changeBesideRelays }
                try await destination.withStore(use, owner: "trellis-store-copy", logger: logger) { store in
                    try await Self.write(
                        dump, into: try Self.transferring(store, at: destination), named: destination.description,
                        replacing: replace)
                }
                for (table, rows) in dump.rowCounts { print("\(table): \(rows) rows") }
                print("copied \(dump.rowCounts.map(\.rows).reduce(0, +)) rows from \(source) to \(destination)")
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
}
