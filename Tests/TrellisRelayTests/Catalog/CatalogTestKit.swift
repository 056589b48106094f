import Foundation
import Testing
import TrellisCore
import TrellisRelay
import TrellisStore
import TrellisTestSupport

/// A small catalog with every combination of the three growth requirements, loaded straight into
/// the relay's store so that the starter catalog stays out and expectations are exact.
enum TestCatalog {
    static let temperatures: [Double] = [-40, 0, 40]

    /// 27 species: each Moisture Use × Shade Tolerance × minimum temperature bucket once.
    static let species: [Species] = {
        var all: [Species] = []
        for (m, moisture) in MoistureUse.allCases.enumerated() {
            for (s, shade) in ShadeTolerance.allCases.enumerated() {
                for (t, temperature) in temperatures.enumerated() {
                    let index = m * 9 + s * 3 + t
                    all.append(
                        Species(
                            symbol: "TS\(index)", scientificName: "Testus \(moisture.rawValue.lowercased()) \(index)",
                            commonName: index % 2 == 0 ? "Even plant \(index)" : "Odd fern \(index)",
                            moistureUse: moisture, shadeTolerance: shade, minTempF: temperature))
                }
            }
        }
        return all
    }()

    static func load(_ relay: RelayHarness) async throws {
        try await load(relay.store)
    }

    static func load(_ store: any TrellisStore) async throws {
        try await store.upsertSpecies(species)
    }

    /// The symbols a filter matches, sorted.
    static func matching(_ filter: CatalogFilter) -> [String] {
        species.filter(filter.matches).map(\.symbol).sorted()
    }
}

/// Reads replies of the catalog services.
extension JSONConsole {
    /// The decoded `data` of an ok reply to `service/action`, sent by `client` (per-client form) or shared.
    func object(_ service: String, _ action: String, _ json: String = "", client: String? = nil) async throws
        -> [String: Any]
    {
        let reply = try await request(service, action, json, client: client)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any], "\(reply)")
        #expect(object["status"] as? String == "ok", "\(reply)")
        return try #require(object["data"] as? [String: Any], "\(reply)")
    }

    /// Every result symbol of a search, following `next_cursor` to the last page.
    func searchAll(_ json: String, client: String? = nil) async throws -> (symbols: [String], pages: Int) {
        var symbols: [String] = []
        var pages = 0
        var cursor: String?
        repeat {
            var request = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            if let cursor { request["cursor"] = cursor }
            let text = String(decoding: try JSONSerialization.data(withJSONObject: request), as: UTF8.self)
            let data = try await object("catalog", "search", text, client: client)
            let results = try #require(data["results"] as? [[String: Any]])
            symbols += results.compactMap { $0["symbol"] as? String }
            cursor = data["next_cursor"] as? String
            pages += 1
        } while cursor != nil && pages < 100
        return (symbols, pages)
    }
}
