@testable import TrellisCore

/// libFuzzer entry: the plant tracker parser, and the replies built from what it returns; the
/// plant names' percent-encoding and a new plant's `name,sensor[,sensor…]` text (also the lines of
/// `trellis run --plants-file`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPlantMessage(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    if case let .success(plant) = NewPlantRequest.parse(text) {
        precondition(!plant.sensors.isEmpty)
    }
    // Decoding whatever a phone sent never fails, and what Trellis encodes decodes back.
    _ = PlantPercentEncoding.decode(text)
    precondition(
        PlantPercentEncoding.decode(PlantPercentEncoding.encode(text)) == text, "percent-encoding does not round-trip")
    switch PlantProtocol.parse(bytes, hostName: "Host-RPI3B+") {
    case let .request(message, operation):
        // Both dialects read the payload; the original dialect's answers and errors stay five fields.
        for dialect in PlantDialect.allCases {
            _ = dialect.read(operation, payload: message.payload)
            if let wire = dialect.wire(dialect.error(.missingVals, for: message, hostName: "Host-RPI3B+")),
                dialect == .original
            {
                precondition(!wire.isEmpty)
            }
        }
        let text = message.payload
        for rendering in [
            PlantDialect.original.render(.plants([PlantSummary(name: text, sensors: [text])])),
            PlantDialect.original.render(
                .sensorRecords([PlantSensorRecord(plant: text, sensor: text, moisture: 1, temperature: 70.5)]))
        ] {
            if case let .payloads(payloads) = rendering {
                precondition(
                    payloads.allSatisfy {
                        !$0.isEmpty && !$0.utf8.contains(0x3A) && !$0.utf8.contains(0x3B)
                            && $0.utf8.allSatisfy { $0 < 0x80 }
                    })
            }
        }
        let reply = PlantProtocol.reply(
            to: message, operation: operation, payload: message.payload, hostName: "Host-RPI3B+")
        let again = PlantProtocol.parse(reply.encodedBytes(), hostName: "other")
        guard case .incomingError = again else {
            if case let .request(parsed, _) = again { precondition(parsed.payload == message.payload) }
            return 0
        }
    case let .rejected(rejection):
        _ = PlantProtocol.error(for: rejection, hostName: "Host-RPI3B+")
    case .incomingError, .ownMessage:
        break
    }
    return 0
}
