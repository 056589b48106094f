@testable import TrellisCore

/// libFuzzer entry: every payload decoder Trellis runs on untrusted bytes — sensor reports,
/// press times, client statuses, button and client ids — and the dead-letter record.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPayloadDecoders(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if case let .success(report) = SensorReport.decode(bytes) {
        precondition(SensorReport.moistureRange.contains(report.moisture))
    }
    if case let .success(time?) = PressPayload.parse(bytes) {
        _ = ISO8601Time.format(time)
    }
    _ = ClientStatus(payload: bytes)
    if case let .success(id) = ButtonIdentifier.validate(bytes) {
        precondition(!id.isEmpty && id.count <= ButtonIdentifier.maximumLength)
    }
    _ = DeadLetter(reason: "fuzz", topic: "fuzz", payload: bytes, receivedAt: .init(timeIntervalSince1970: 0)).json()
    return 0
}
