import Foundation
import Testing
import TrellisCore
import TrellisRelay

@Suite("Catalog: the starter catalog")
struct StarterCatalogTests {
    @Test("the embedded starter catalog is catalog/usda-starter.csv, and every row of it imports")
    func embedded() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let shipped = try String(contentsOf: root.appendingPathComponent("catalog/usda-starter.csv"), encoding: .utf8)
        #expect(StarterCatalog.text == shipped)
        let parsed = try USDACharacteristicsCSV.parse(shipped)
        #expect(parsed.skipped.isEmpty)
        #expect(parsed.species.count >= 60)
        #expect(Set(parsed.species.map(\.symbol)).count == parsed.species.count)
        for use in MoistureUse.allCases { #expect(parsed.species.contains { $0.moistureUse == use }) }
        for tolerance in ShadeTolerance.allCases { #expect(parsed.species.contains { $0.shadeTolerance == tolerance }) }
        for (_, range) in TemperatureRange.buckets { #expect(parsed.species.contains { range.contains($0.minTempF) }) }
    }
}
