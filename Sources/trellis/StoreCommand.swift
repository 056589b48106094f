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
        discussion: "See docs/scaling-out.md in the source tree for moving from one relay on SQLite to several on PostgreSQL.",
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
                The target is a postgres:// URL, or a state directory (SQLite, made when missing), which is refused \
                while a relay runs on it. A target that already holds a state is refused unless --replace is given, \
                which empties it in the same transaction. Exits 0 after printing the rows copied per table and \
                checking that the target now reads back exactly what was copied; 1 on any failure.
                """
        )

        @Option(name: .long, help: ArgumentHelp("The state to copy: a state directory (SQLite) or a postgres:// URL.", valueName: "dir|url"))
        var from: String

        @Option(name: .long, help: ArgumentHelp("""
            Where to copy it: a postgres://user[:password]@host[:port]/database[?sslmode=…] URL, or a state \
            directory (SQLite) (default: TRELLIS_STATE_STORE).
            """, valueName: "url|dir"))
        var to: String?

        @Flag(name: .long, help: "Empty a target that already holds a state before copying (default: refuse it).")
        var replace = false

        func run() async throws {
            let target = to ?? ProcessInfo.processInfo.environment["TRELLIS_STATE_STORE"] ?? ""
            guard !target.isEmpty else {
                throw fail("name the target with --to (a postgres:// URL or a state directory), or set TRELLIS_STATE_STORE")
            }
            guard target != from else { throw fail("--from and --to name the same state") }
            let logger = Logger(label: "trellis.store")
            do {
                let dump = try await Self.read(from, logger: logger)
                if PostgresURL.isPostgres(target) {
                    let store = try await PostgresStore.connect(try PostgresURL(target), owner: "trellis-store-copy", logger: logger)
                    try await Self.write(dump, into: store, named: store.url.description, replacing: replace)
                } else {
                    try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
                    let copied: Void? = try await StateDirectoryLock.whileNoRelayRuns(target) {
                        try await Self.write(dump, into: try SQLiteStore(directory: target, logger: logger), named: target, replacing: replace)
                    }
                    guard copied != nil else {
                        throw StoreError(code: .operationFailed, message: "a relay is running on \(target); stop it first. Nothing was copied")
                    }
                }
                for (table, rows) in dump.rowCounts { print("\(table): \(rows) rows") }
                print("copied \(dump.rowCounts.map(\.rows).reduce(0, +)) rows from \(Self.describe(from)) to \(Self.describe(target))")
            } catch {
                throw fail("\(error)")
            }
        }

        /// Writes `dump` into `store` (refused when it holds a state, unless `replacing`), checks that it
        /// reads back the same, and closes the store whatever happens.
        static func write(_ dump: StateDump, into store: some StateImporting & StoreLifecycle, named name: String,
                          replacing: Bool) async throws {
            do {
                let occupied = try await store.nonEmptyTables()
                if !occupied.isEmpty && !replacing {
                    throw StoreError(code: .operationFailed, message: "\(name) already holds a state (rows in "
                        + "\(occupied.joined(separator: ", "))); nothing was copied. Give --replace to empty it first")
                }
                try await store.importState(dump, replacing: replacing)
                let copied = try await store.exportState()
                guard normalized(copied) == normalized(dump) else {
                    throw StoreError(code: .operationFailed, message: "\(name) does not read back what was copied")
                }
                try await store.close()
            } catch {
                try? await store.close()
                throw error
            }
        }

        /// The state at `source`, read whole.
        static func read(_ source: String, logger: Logger) async throws -> StateDump {
            if PostgresURL.isPostgres(source) {
                return try await export(try await PostgresStore.connect(try PostgresURL(source), owner: "trellis-store-copy", logger: logger))
            }
            let database = (source as NSString).appendingPathComponent(SQLiteStore.fileName)
            guard FileManager.default.fileExists(atPath: database) else {
                throw StoreError(code: .cannotOpen, message: "\(source) holds no Trellis state (no \(SQLiteStore.fileName))")
            }
            return try await export(try SQLiteStore(directory: source, logger: logger))
        }

        /// `store`'s whole state; the store is closed afterwards, whether the read worked or not.
        static func export(_ store: some StateExporting & StoreLifecycle) async throws -> StateDump {
            do {
                let dump = try await store.exportState()
                try await store.close()
                return dump
            } catch {
                try? await store.close()
                throw error
            }
        }

        /// A dump with booleans as 0 and 1 and columns in name order, so dumps of both stores compare.
        static func normalized(_ dump: StateDump) -> [String: [[String: DumpValue]]] {
            Dictionary(uniqueKeysWithValues: dump.tables.map { table in
                (table.name, table.rows.map { row in
                    Dictionary(uniqueKeysWithValues: zip(table.columns, row.map(\.normalized)))
                })
            })
        }

        static func describe(_ source: String) -> String {
            PostgresURL.isPostgres(source) ? ((try? PostgresURL(source))?.description ?? "a PostgreSQL database") : source
        }
    }
}
