#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
@testable import TrellisCore

/// libFuzzer entry: every reader of the JSON services' requests — the request envelope, each fleet,
/// catalog, browse and dead-letter action's members, `since` times, catalog cursors, browse
/// PERM_IDs and REFCONs — and the hand-written renderers their answers go through.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONServices(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let now = Date(timeIntervalSince1970: 1_780_000_000)
    if case let .success(request) = JSONRequest.parse(bytes) {
        for action in FleetRequest.actions.all { _ = action.parse(request, perClient: false, limits: FleetLimits()) }
        for action in CatalogRequest.actions.all {
            _ = action.parse(request, perClient: true, limits: CatalogLimits())
            _ = action.parse(request, perClient: false, limits: CatalogLimits())
        }
        if case let .success(.drill(targets)) = BrowseRequest.parse(request) {
            for target in targets { _ = target.resolve() }
        }
        _ = DeadLetterQuery.read(request, now: now)
    }
    let text = String(decoding: bytes, as: UTF8.self)
    if let value = JSONValue.parse(text) {
        _ = LogSince.parse(value)
    }
    _ = LogSince.parse(.string(text))
    _ = DeadLetterSince.parse(text, now: now)
    if let ref = EntityRef(permID: text) {
        precondition(ref.refconProblem(ref.refcon) == nil)
        precondition(EntityRef(permID: ref.permID) == ref)
    }
    if let cursor = CatalogCursor(encoded: text) {
        precondition(CatalogCursor(encoded: cursor.encoded) == cursor, "a catalog cursor does not round-trip")
    }
    precondition(Base64URL.decode(Base64URL.encode(bytes)) == bytes, "base64url does not round-trip")
    _ = PlantPayloads.sensorData([
        PlantSensorRecord(plant: text, sensor: text, moisture: size, temperature: Double(size) / 7)
    ])
    return 0
}
