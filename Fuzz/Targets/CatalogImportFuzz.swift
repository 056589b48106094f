@testable import TrellisCore

/// libFuzzer entry: `trellis catalog import`'s reader of a USDA PLANTS characteristics download
/// (CSV, quoted fields, columns found by their header names). Every species it keeps has the
/// values the catalog is searched by.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCatalogImport(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let read = try? USDACharacteristicsCSV.parse(text) else { return 0 }
    for species in read.species {
        precondition(Species.isValidSymbol(species.symbol), "a species with an unusable symbol")
        precondition(!species.scientificName.isEmpty, "a species without a scientific name")
    }
    precondition(read.skipped.allSatisfy { $0.line >= 2 }, "a skipped row before the first after the header")
    return 0
}
