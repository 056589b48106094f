#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
@testable import TrellisCore

/// libFuzzer entry: every MQTT payload decoder Trellis runs on untrusted bytes — sensor readings,
/// press times, button clients' registrations (client statuses, button and client ids), the
/// devices' messages (status, telemetry, log lines), the discovery ids of retained topics the sweep
/// reads back — and the dead-letter record.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPayloadDecoders(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // Sensor readings.
    if case let .success(report) = SensorReport.decode(bytes) {
        precondition(SensorReport.moistureRange.contains(report.moisture))
    }
    // Presses and registrations.
    if case let .success(time?) = PressPayload.parse(bytes) {
        _ = ISO8601Time.format(time)
    }
    _ = ClientStatus(payload: bytes)
    if case let .success(id) = ButtonIdentifier.validate(bytes) {
        precondition(!id.isEmpty && id.count <= ButtonIdentifier.maximumLength)
    }
    _ = ButtonIdentifier.validate(bytes, kind: "client id")
    // Device messages.
    _ = Powerstate(payload: bytes)
    _ = DeviceTelemetry.parse(bytes)
    if case let .success(entry) = DeviceLogEntry.parse(bytes, receivedAt: Date(timeIntervalSince1970: 0)) {
        _ = DevicePayloads.logEntry(entry)
    }
    // Discovery ids: what decodes was written by encode, and encode's output always decodes back.
    let text = String(decoding: bytes, as: UTF8.self)
    if let id = DiscoveryID.decode(text[...]) {
        precondition(DiscoveryID.encode(id) == text, "a decoded discovery id does not encode back")
    }
    precondition(DiscoveryID.decode(DiscoveryID.encode(text)[...]) == text, "a discovery id does not round-trip")
    _ = DeadLetter(reason: "fuzz", topic: "fuzz", payload: bytes, receivedAt: .init(timeIntervalSince1970: 0)).json()
    return 0
}
