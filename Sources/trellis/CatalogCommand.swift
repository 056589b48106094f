import ArgumentParser
import Foundation
import TrellisCore
import TrellisRelay
import TrellisStore
import TrellisStorePostgres
import TrellisStoreSQLite

/// `trellis catalog`: the plant catalog kept in the state.
struct CatalogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog",
        abstract: "Manage the plant catalog in Trellis's state.",
        discussion: """
            The catalog holds species with their USDA PLANTS growth requirements; `trellis run` imports the \
            starter catalog (catalog/usda-starter.csv, also compiled in) the first time it finds the catalog empty. \
            Its MQTT actions are described in docs/catalog.md in the source tree.
            """,
        subcommands: [Import.self]
    )

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import a USDA PLANTS characteristics CSV download into the catalog.",
            discussion: """
                Columns are found by their header names: "Symbol", "Scientific Name", "Common Name", "Moisture Use", \
                "Shade Tolerance" and "Temperature, Minimum (°F)"; other columns are ignored. Species are upserted \
                by symbol. A row without a symbol, a scientific name, or a value for one of the three requirements \
                is skipped and reported with its line number. Stop `trellis run` on the same state first, or import \
                while it runs: each import is one transaction.
                """
        )

        @Argument(help: ArgumentHelp("The CSV file.", valueName: "file"))
        var file: String

        @Option(name: .long, help: ArgumentHelp("Directory of Trellis's SQLite state, created if missing.", valueName: "dir"))
        var state = "trellis-state"

        @Option(name: .long, help: ArgumentHelp("Import into this PostgreSQL store instead of the SQLite state (default: TRELLIS_STATE_STORE when set).", valueName: "postgres-url"))
        var store: String?

        func run() async throws {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw fail("cannot read \(file): \(unreadableReason(file))")
            }
            guard let text = String(validating: Array(data), as: UTF8.self) else {
                throw fail("\(file) is not UTF-8 text")
            }
            let parsed: USDACharacteristicsCSV.Result
            do {
                parsed = try USDACharacteristicsCSV.parse(text)
            } catch {
                throw fail("\(file): \(error)")
            }
            let target = store ?? ProcessInfo.processInfo.environment["TRELLIS_STATE_STORE"] ?? ""
            let store: any TrellisStore
            do {
                if target.isEmpty {
                    store = try SQLiteStore(directory: state)
                } else {
                    store = try await PostgresStore.connect(try PostgresURL(target), owner: "trellis-catalog-import")
                }
            } catch {
                throw fail("\(error)")
            }
            do {
                try await store.upsertSpecies(parsed.species)
                let total = try await store.speciesCount()
                try await store.close()
                for row in parsed.skipped { print("skipped \(file):\(row.line): \(row.reason)") }
                print("imported \(parsed.species.count) species, skipped \(parsed.skipped.count) rows; the catalog holds \(total) species")
            } catch {
                try? await store.close()
                throw fail("\(error)")
            }
        }
    }
}
