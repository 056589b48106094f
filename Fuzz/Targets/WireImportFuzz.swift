@testable import TrellisCore
@testable import TrellisWire

/// libFuzzer entry: `trellis capture import`'s pcap / pcapng reader, the link, IP and TCP layers and
/// the MQTT reader on untrusted bytes, fed whole and in small chunks (which must give the same
/// events), and the MQTT framer and packet decoder on the bytes as one stream. Every record read
/// must survive a write and a second read as a capture line.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWireImport(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var whole = WireImport(ports: [1883], assumedVersion: .v5)
    let events = whole.push(bytes) + whole.finish()
    var chunked = WireImport(ports: [1883], assumedVersion: .v5)
    var again: [WireImport.Event] = []
    var offset = 0
    while offset < bytes.count {
        again += chunked.push(bytes[offset..<min(bytes.count, offset + 7)])
        offset += 7
    }
    again += chunked.finish()
    precondition(events.count == again.count, "chunked reading gives other events")
    for event in events {
        guard case let .message(message) = event else { continue }
        guard case let .success(reread) = CaptureRecord.decode(line: message.record.jsonLine) else {
            preconditionFailure("an imported record does not read back")
        }
        precondition(reread == message.record)
    }
    // The MQTT reader alone, on the bytes as one client's stream.
    var framer = MQTTFramer(synced: true)
    framer.append(bytes[...])
    while let frame = try? framer.next() {
        _ = try? MQTTPacket.decode(frame, version: .v5)
        _ = try? MQTTPacket.decode(frame, version: .v311)
    }
    return 0
}
