/// libFuzzer entry: the plant tracker parser, and the replies built from what it returns.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPlantMessage(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    switch PlantProtocol.parse(bytes, hostName: "Host-RPI3B+") {
    case let .request(message, operation):
        let reply = PlantProtocol.reply(to: message, operation: operation, payload: message.payload, hostName: "Host-RPI3B+")
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
    if case let .success(plant) = NewPlantRequest.parse(String(decoding: bytes, as: UTF8.self)) {
        precondition(!plant.sensors.isEmpty)
    }
    return 0
}
