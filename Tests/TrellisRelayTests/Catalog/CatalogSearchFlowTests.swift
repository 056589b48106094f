import Foundation
import Testing
import TrellisCore
import TrellisRelay
import TrellisTestSupport

/// The catalog's search and care advice on the relay's engine, over SQLite and PostgreSQL: the
/// replies are the service's alone, so no broker is needed (the JSON envelope's way through a
/// broker is tested with the fleet's requests).
@Suite("Catalog: search and care advice on the engine, over every store")
struct CatalogSearchFlowTests {
    /// An engine over a fresh store of `kind` holding the test catalog, and its console.
    static func withCatalog(_ kind: StoreKind, _ body: (EngineConsole) async throws -> Void) async throws {
        try await withEngine(kind) { harness in
            try await TestCatalog.load(harness.store)
            try await body(EngineConsole(harness: harness))
        }
    }

    @Test(
        "each filter and bucket returns exactly its matches, through every page",
        arguments: StoreKind.bothStores,
        [
            (#"{"moisture":"High"}"#, CatalogFilter(moisture: .high)),
            (#"{"moisture":"any","shade":"Intolerant"}"#, CatalogFilter(shade: .intolerant)),
            (#"{"min_temp":"-75..-17"}"#, CatalogFilter(minTemp: TemperatureRange.bucket(named: "-75..-17"))),
            (
                #"{"min_temp":"-17..23","shade":"Tolerant"}"#,
                CatalogFilter(shade: .tolerant, minTemp: TemperatureRange.bucket(named: "-17..23"))
            ),
            (
                #"{"min_temp":{"from":30,"to":50},"moisture":"low"}"#,
                CatalogFilter(moisture: .low, minTemp: TemperatureRange(lower: 30, upper: 50))
            ),
            (
                #"{"name":"FERN","moisture":"Medium","shade":"Intermediate","min_temp":"23..100"}"#,
                CatalogFilter(
                    moisture: .medium, shade: .intermediate, minTemp: TemperatureRange.bucket(named: "23..100"),
                    name: "fern")
            ),
            (#"{"name":"testus high"}"#, CatalogFilter(name: "testus high")),
            (#"{}"#, CatalogFilter())
        ])
    func filters(kind: StoreKind, search: (request: String, filter: CatalogFilter)) async throws {
        let (request, filter) = search
        try await Self.withCatalog(kind) { console in
            var limited = try #require(try JSONSerialization.jsonObject(with: Data(request.utf8)) as? [String: Any])
            limited["limit"] = 4
            let text = String(decoding: try JSONSerialization.data(withJSONObject: limited), as: UTF8.self)
            let (symbols, pages) = try await console.searchAll(text)
            #expect(symbols.sorted() == TestCatalog.matching(filter))
            #expect(Set(symbols).count == symbols.count, "a species came twice")
            #expect(pages == max(1, (symbols.count + 3) / 4))
        }
    }

    @Test(
        "the same seed gives the same order; pages never exceed 50; a bad member is named",
        arguments: StoreKind.bothStores)
    func seedsAndLimits(_ kind: StoreKind) async throws {
        try await Self.withCatalog(kind) { console in
            let first = try await console.searchAll(#"{"seed":42,"limit":5}"#)
            let second = try await console.searchAll(#"{"seed":42,"limit":7}"#)
            #expect(first.symbols == second.symbols)
            #expect(first.symbols.count == TestCatalog.species.count)
            let other = try await console.searchAll(#"{"seed":43,"limit":50}"#)
            #expect(other.symbols != first.symbols && other.symbols.sorted() == first.symbols.sorted())
            let data = try await console.object("catalog", "search", "")
            #expect((data["results"] as? [Any])?.count == TestCatalog.species.count)
            #expect(data["next_cursor"] is NSNull)
            for bad in [
                #"{"limit":51}"#, #"{"moisture":"Damp"}"#, #"{"cursor":"nonsense"}"#, #"{"min_temp":"0..10"}"#,
                #"{"colour":"red"}"#, #"{"unseen_only":true}"#
            ] {
                #expect(try await console.errorCode("catalog", "search", bad) == "invalid_request", "\(bad)")
            }
        }
    }

    @Test(
        "unseen_only on the per-client form never repeats a species, and other clients are not affected",
        arguments: StoreKind.bothStores)
    func unseenOnly(_ kind: StoreKind) async throws {
        try await Self.withCatalog(kind) { console in
            var shown: [String] = []
            for _ in 0..<4 {
                let data = try await console.object(
                    "catalog", "search", #"{"unseen_only":true,"limit":8}"#, client: "ann")
                shown += try #require(data["results"] as? [[String: Any]]).compactMap { $0["symbol"] as? String }
            }
            #expect(shown.count == TestCatalog.species.count)
            #expect(Set(shown).count == shown.count)
            let exhausted = try await console.object("catalog", "search", #"{"unseen_only":true}"#, client: "ann")
            #expect((exhausted["results"] as? [Any])?.isEmpty == true)
            let fresh = try await console.object("catalog", "search", #"{"unseen_only":true}"#, client: "ben")
            #expect((fresh["results"] as? [Any])?.count == TestCatalog.species.count)
        }
    }

    @Test(
        "catalog/get gives the species with its care texts; an unknown symbol is not_found",
        arguments: StoreKind.bothStores)
    func get(_ kind: StoreKind) async throws {
        try await Self.withCatalog(kind) { console in
            let high = try #require(
                TestCatalog.species.first { $0.moistureUse == .high && $0.shadeTolerance == .intolerant })
            let data = try await console.object("catalog", "get", #"{"symbol":"\#(high.symbol)"}"#)
            #expect(data["common_name"] as? String == high.commonName)
            let care = try #require(data["care"] as? [String: String])
            #expect(
                care == [
                    "watering": CareAdvice.watering(.high), "light": CareAdvice.light(.intolerant),
                    "cold": CareAdvice.cold(minTempF: high.minTempF)
                ])
            #expect(care["watering"]?.contains("3–4 days") == true)
            #expect(care["light"]?.contains("full sun") == true)
            #expect(try await console.errorCode("catalog", "get", #"{"symbol":"NOPE1"}"#) == "not_found")
            #expect(try await console.errorCode("catalog", "get", #"{"symbol":"lower"}"#) == "invalid_request")
            #expect(try await console.errorCode("catalog", "nap", "") == "unknown_action")
        }
    }
}
