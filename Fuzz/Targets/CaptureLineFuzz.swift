@testable import TrellisCore

/// libFuzzer entry: the capture-line reader (Trellis's own lines and `mosquitto_sub -F '%j'`
/// lines); every line it accepts must survive a write and a second read unchanged.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCaptureLine(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if case let .success(record) = CaptureRecord.decode(bytes: bytes) {
        let again = CaptureRecord.decode(line: record.jsonLine)
        guard case let .success(reread) = again else { preconditionFailure("a written line does not read back") }
        precondition(reread == record)
    }
    return 0
}
