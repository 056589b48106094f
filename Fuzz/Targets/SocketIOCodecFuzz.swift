@testable import TrellisCore
@testable import TrellisSocketIO

/// libFuzzer entry: the Socket.IO endpoint's decoders on untrusted bytes — polling bodies in the
/// three framings, single packets, Socket.IO packets and event data — and a session fed with
/// whatever decoded, checking that Engine.IO 3 text framing round-trips.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSocketIOCodec(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for version in EngineIOVersion.allCases {
        guard case let .success(packets) = EngineIOPayload.decode(bytes, version) else { continue }
        if version == .v3 {
            let again = EngineIOPayload.decode(Array(EngineIOPayload.encode(packets, .v3).utf8), .v3)
            precondition(again == .success(packets), "Engine.IO 3 text framing does not round-trip")
        }
        var (session, _) = EngineIOSession.open(id: "fuzz", socketID: "fuzz", version: version, transport: .polling,
                                                limits: EngineIOLimits(pingInterval: 25, pingTimeout: 20, maximumBufferedPackets: 16), now: 0)
        for (index, packet) in packets.enumerated() {
            _ = session.receive(packet, via: index % 2 == 0 ? .polling : .websocket, now: Double(index))
            _ = session.emit("button-press", argumentsJSON: [JSONText.string("x")])
            _ = session.tick(now: Double(index))
        }
        _ = session.drain()
    }
    let text = String(decoding: bytes, as: UTF8.self)
    if case let .success(packet) = SocketIOPacket.decode(text) {
        _ = packet.event()
        precondition(SocketIOPacket.decode(packet.encoded) == .success(packet), "a Socket.IO packet does not round-trip")
    }
    _ = JSONText.string(text)
    return 0
}
