import Foundation
import TrellisCore
import TrellisMQTT

/// A generated catalog for the catalog search figure: every combination of the growth requirements
/// spread evenly, and names a substring search has to look through.
enum BenchCatalog {
    static let words = [
        "aster", "bellflower", "clover", "daisy", "fern", "goldenrod", "heather", "iris", "juniper", "laurel"
    ]

    static func species(count: Int) -> [Species] {
        (0..<count).map { index in
            Species(
                symbol: "BX\(index)", scientificName: "Benchus \(words[index % words.count]) \(index)",
                commonName: "\(words[(index / 10) % words.count]) number \(index)",
                moistureUse: MoistureUse.allCases[index % 3], shadeTolerance: ShadeTolerance.allCases[(index / 3) % 3],
                minTempF: Double(index % 120) - 60)
        }
    }

    /// The search of the figure: all three filters and a name.
    static let request = #"{"moisture":"Medium","shade":"Intermediate","min_temp":"-17..23","name":"fern","limit":50"#
}
