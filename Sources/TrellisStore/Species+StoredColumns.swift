import TrellisCore

/// How a species is kept in a store's `species` table, said once for every backend: the columns
/// it is read from, in one order, and how a row's words become requirements.
extension Species {
    /// The `species` table's columns, in the order ``stored(symbol:scientificName:commonName:moistureUse:shadeTolerance:minTempF:imageURL:)`` takes them.
    package static let storedColumnNames = [
        "symbol", "scientific_name", "common_name", "moisture_use", "shade_tolerance", "min_temp_f", "image_url"
    ]

    /// The columns for a `SELECT`, qualified by `alias` when one is given (`s.symbol, s.scientific_name, …`).
    package static func storedColumns(_ alias: String? = nil) -> String {
        guard let alias else { return storedColumnNames.joined(separator: ", ") }
        return storedColumnNames.map { "\(alias).\($0)" }.joined(separator: ", ")
    }

    /// A species from its stored columns. A requirement word the store does not know (a row
    /// written by a newer release) reads as the middle value rather than failing the read.
    package static func stored(
        symbol: String, scientificName: String, commonName: String, moistureUse: String,
        shadeTolerance: String, minTempF: Double, imageURL: String?
    ) -> Species {
        Species(
            symbol: symbol, scientificName: scientificName, commonName: commonName,
            moistureUse: MoistureUse(rawValue: moistureUse) ?? .medium,
            shadeTolerance: ShadeTolerance(rawValue: shadeTolerance) ?? .intermediate,
            minTempF: minTempF, imageURL: imageURL)
    }
}
