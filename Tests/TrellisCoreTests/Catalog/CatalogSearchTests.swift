import Testing
@testable import TrellisCore

private func plant(
    _ symbol: String, _ moisture: MoistureUse = .medium, _ shade: ShadeTolerance = .intermediate,
    _ minTemp: Double = 0, common: String = "plant", scientific: String = "Plantus"
) -> Species {
    Species(
        symbol: symbol, scientificName: scientific, commonName: common, moistureUse: moisture,
        shadeTolerance: shade, minTempF: minTemp)
}

@Suite("Catalog: filters, shuffle and cursors")
struct CatalogSearchTests {
    @Test(
        "min_temp buckets: half-open, the warmest includes 100",
        arguments: [
            ("-75..-17", -75.0, true), ("-75..-17", -17.0, false), ("-75..-17", -76.0, false),
            ("-17..23", -17.0, true), ("-17..23", 22.9, true), ("-17..23", 23.0, false),
            ("23..100", 23.0, true), ("23..100", 100.0, true), ("23..100", 100.5, false)
        ])
    func buckets(name: String, temperature: Double, inside: Bool) throws {
        let range = try #require(try CatalogFilter.minTemp(bucket: name).get())
        #expect(range.contains(temperature) == inside)
    }

    @Test(
        "filter values, `any`, and refusals naming the member",
        arguments: [
            ("moisture", "high", true), ("moisture", "Any", true), ("moisture", "wet", false),
            ("shade", "INTOLERANT", true), ("shade", "any", true), ("shade", "sunny", false),
            ("min_temp", "any", true), ("min_temp", "0..10", false)
        ])
    func filterValues(member: String, value: String, accepted: Bool) {
        let error: FilterError? =
            switch member {
            case "moisture": CatalogFilter.moisture(value).failure
            case "shade": CatalogFilter.shade(value).failure
            default: CatalogFilter.minTemp(bucket: value).failure
            }
        #expect((error == nil) == accepted)
        if let error { #expect(error.member == member) }
    }

    @Test("{from, to} includes both ends; from above to is refused")
    func customRange() throws {
        let range = try #require(try CatalogFilter.minTemp(from: -10, to: 10).get())
        #expect(range.contains(-10) && range.contains(10) && !range.contains(10.1))
        #expect(CatalogFilter.minTemp(from: 5, to: 1).failure?.member == "min_temp")
        #expect(try CatalogFilter.minTemp(from: nil, to: 0).get()?.contains(-99) == true)
    }

    @Test(
        "each filter alone and together",
        arguments: [
            (CatalogFilter(moisture: .high), ["B", "D"]),
            (CatalogFilter(shade: .tolerant), ["A", "D"]),
            (CatalogFilter(minTemp: TemperatureRange.bucket(named: "23..100")), ["C", "D"]),
            (CatalogFilter(name: "MAPLE"), ["A", "B"]),
            (CatalogFilter(name: "acer"), ["A"]),
            (
                CatalogFilter(
                    moisture: .high, shade: .tolerant, minTemp: TemperatureRange.bucket(named: "23..100"), name: "fern"),
                ["D"]
            ),
            (CatalogFilter(), ["A", "B", "C", "D"])
        ])
    func filters(filter: CatalogFilter, expected: [String]) {
        let all = [
            plant("A", .low, .tolerant, -30, common: "sugar maple", scientific: "Acer saccharum"),
            plant("B", .high, .intermediate, -20, common: "swamp maple", scientific: "Rubrum"),
            plant("C", .medium, .intolerant, 30, common: "basil", scientific: "Ocimum"),
            plant("D", .high, .tolerant, 28, common: "Boston fern", scientific: "Nephrolepis")
        ]
        #expect(all.filter(filter.matches).map(\.symbol) == expected)
    }

    @Test(
        "the same seed gives the same order; different seeds differ",
        arguments: [0, 1, 42, 9_007_199_254_740_992] as [UInt64])
    func seededShuffle(seed: UInt64) {
        let species = (0..<200).map { plant("S\($0)") }
        let first = CatalogShuffle.order(species, seed: seed)
        #expect(first == CatalogShuffle.order(species.reversed(), seed: seed))
        #expect(Set(first.map(\.symbol)) == Set(species.map(\.symbol)))
        #expect(first != CatalogShuffle.order(species, seed: seed + 1))
        #expect(first != species)
    }

    @Test("hashes and keys are non-negative 62-bit values")
    func keyRange() {
        for index in 0..<1000 {
            let hash = CatalogShuffle.symbolHash("X\(index)")
            #expect(hash >= 0 && hash < 1 << 62)
            #expect(CatalogShuffle.key(hash: hash, seed: UInt64(index)) >= 0)
        }
    }

    @Test(
        "cursors survive encoding; foreign text is not a cursor",
        arguments: [
            CatalogCursor(seed: 0, key: 0, symbol: "A"),
            CatalogCursor(seed: 9_007_199_254_740_992, key: 4_611_686_018_427_387_903, symbol: "ABCDEFGHIJ123456"),
            CatalogCursor(seed: 77, key: 12345, symbol: "ACRU")
        ])
    func cursorRoundTrip(cursor: CatalogCursor) {
        #expect(CatalogCursor(encoded: cursor.encoded) == cursor)
        #expect(cursor.encoded.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
    }

    @Test(
        "not cursors",
        arguments: [
            "", "x", "!!!!", "YWJj", Base64URL.encode(Array("c1.1.2.acru".utf8)),
            Base64URL.encode(Array("c2.1.2.ACRU".utf8))
        ])
    func notCursors(text: String) {
        #expect(CatalogCursor(encoded: text) == nil)
    }
}

extension Result {
    var failure: Failure? {
        if case let .failure(error) = self { return error }
        return nil
    }
}
