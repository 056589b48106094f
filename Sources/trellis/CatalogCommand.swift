import TrellisApplication
import ArgumentParser
import Foundation
import TrellisCore
import TrellisRelay
import Logging
import TrellisStore

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
                is skipped and reported with its line number. The state is found as `trellis run` finds it (--state, \
                --store, state.store, state.dir) and made there when there is none yet. Stop `trellis run` on the \
                same state first, or import while it runs: each import is one transaction.
                """
        )

        @Argument(help: ArgumentHelp("The CSV file.", valueName: "file"))
        var file: String

        @OptionGroup var location: StateStoreLocation

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
            let place = try await location.resolve().place
            var logger = Logger(label: "trellis.catalog")
            logger.logLevel = .warning
            let total: Int
            do {
                total = try await place.withStore(.changeBesideRelays, owner: "trellis-catalog-import", logger: logger)
                { store in
                    try await store.upsertSpecies(parsed.species)
                    return try await store.speciesCount()
                }
            } catch {
                throw fail("not imported: \(error)")
            }
            for row in parsed.skipped { print("skipped \(file):\(row.line): \(row.reason)") }
            print(
                "imported \(parsed.species.count) species, skipped \(parsed.skipped.count) rows; the catalog holds \(total) species"
            )
        }
    }
}
