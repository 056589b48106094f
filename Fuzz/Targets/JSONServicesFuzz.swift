#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@testable import TrellisCore

/// libFuzzer entry: every decoder of the JSON services and the device fleet — the request envelope,
/// each fleet, catalog and browse action's members, browse PERM_IDs and REFCONs, device log lines,
/// telemetry and status — and the hand-written renderers their answers go through.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONServices(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if case let .success(request) = JSONRequest.parse(bytes) {
        for (service, actions) in FleetRequest.actions {
            for action in actions { _ = FleetRequest.parse(service: service, action: action, request) }
        }
        for (service, actions) in CatalogRequest.actions {
            for action in actions {
                _ = CatalogRequest.parse(service: service, action: action, request, perClient: true)
                _ = CatalogRequest.parse(service: service, action: action, request, perClient: false)
            }
        }
        if case let .success(.drill(targets)) = BrowseRequest.parse(request) {
            for target in targets { _ = target.resolve() }
        }
    }
    let text = String(decoding: bytes, as: UTF8.self)
    if let ref = EntityRef(permID: text) {
        precondition(ref.refconProblem(ref.refcon) == nil)
        precondition(EntityRef(permID: ref.permID) == ref)
    }
    if case let .success(entry) = DeviceLogEntry.parse(bytes, receivedAt: Date(timeIntervalSince1970: 0)) {
        _ = DevicePayloads.logEntry(entry)
    }
    _ = DeviceTelemetry.parse(bytes)
    _ = Powerstate(payload: bytes)
    _ = PlantPayloads.sensorData([PlantSensorRecord(plant: text, sensor: text, moisture: size, temperature: Double(size) / 7)])
    return 0
}
