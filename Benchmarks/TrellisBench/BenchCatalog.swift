import Foundation
import TrellisCore
import TrellisMQTT

/// A generated catalog for the catalog search figure: every combination of the growth requirements
/// spread evenly, and names a substring search has to look through.
enum BenchCatalog {
    static let words = ["aster", "bellflower", "clover", "daisy", "fern", "goldenrod", "heather", "iris", "juniper", "laurel"]

    static func species(count: Int) -> [Species] {
        (0..<count).map { index in
            Species(symbol: "BX\(index)", scientificName: "Benchus \(words[index % words.count]) \(index)",
                    commonName: "\(words[(index / 10) % words.count]) number \(index)",
                    moistureUse: MoistureUse.allCases[index % 3], shadeTolerance: ShadeTolerance.allCases[(index / 3) % 3],
                    minTempF: Double(index % 120) - 60)
        }
    }

    /// The search of the figure: all three filters and a name.
    static let request = #"{"moisture":"Medium","shade":"Intermediate","min_temp":"-17..23","name":"fern","limit":50"#
}

extension LoadGenerator {
    /// `count` closed-loop `catalog/search` requests; returns each round trip in microseconds.
    mutating func catalogSearches(count: Int) async throws -> [Double] {
        var samples: [Double] = []
        let clock = ContinuousClock()
        for id in 0..<count {
            let start = clock.now
            try client.publish(topic: "trellis/request/catalog/search",
                               payload: Array((BenchCatalog.request + #","seed":\#(id),"transaction":\#(id)}"#).utf8), qos: .atMostOnce)
            let reply = try await next()
            let elapsed = clock.now - start
            guard let text = reply.text, text.contains(#""status":"ok""#), text.hasSuffix(#""transaction":\#(id)}"#) else {
                throw BenchError("unexpected reply to catalog search \(id): \(reply.text ?? "")")
            }
            samples.append(Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12)
        }
        return samples
    }
}
