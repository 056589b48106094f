import TrellisCore
import TrellisStore

/// The starter catalog compiled into `trellis`, identical to the repository's
/// `catalog/usda-starter.csv`: common garden and house plants with their USDA PLANTS
/// characteristics, in the form `trellis catalog import` reads.
public enum StarterCatalog {
    /// The starter species.
    public static var species: [Species] {
        // The embedded text is checked by a test, so it always parses.
        (try? USDACharacteristicsCSV.parse(text).species) ?? []
    }

    /// Imports the starter catalog when the store's catalog is empty.
    /// - Returns: how many species were imported (0 when the catalog already held some).
    @discardableResult
    public static func seedIfEmpty(_ store: any CatalogStore) async throws -> Int {
        try await store.seedCatalogIfEmpty(species)
    }
}
