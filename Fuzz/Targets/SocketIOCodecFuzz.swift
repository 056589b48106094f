@testable import TrellisCore
@testable import TrellisSocketIO

/// libFuzzer entry: the Socket.IO endpoint's decoders on untrusted bytes — polling bodies (the HTTP
/// POST body) in the three framings, WebSocket text and binary frames, the handshake's `EIO` and
/// `b64` query parameters and press token, Socket.IO packets and event data — and a session fed
/// with whatever decoded, checking that Engine.IO 3 text framing, single packets, base64 and
/// Socket.IO packets round-trip.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSocketIOCodec(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    for version in EngineIOVersion.allCases {
        // A polling body.
        guard case let .success(packets) = EngineIOPayload.decode(bytes, version) else { continue }
        if version == .v3 {
            let again = EngineIOPayload.decode(Array(EngineIOPayload.encode(packets, .v3).utf8), .v3)
            precondition(again == .success(packets), "Engine.IO 3 text framing does not round-trip")
        }
        for base64 in [nil, "1"] {
            _ = EngineIOPayload.encode(packets, EngineIOFraming(version: version, base64: base64))
        }
        var (session, _) = EngineIOSession.open(
            id: "fuzz", socketID: "fuzz", version: version, transport: .polling,
            limits: EngineIOLimits(pingInterval: 25, pingTimeout: 20, maximumBufferedPackets: 16), now: 0)
        for (index, packet) in packets.enumerated() {
            _ = session.receive(packet, via: index % 2 == 0 ? .polling : .websocket, now: Double(index))
            _ = session.emit("button-press", argumentsJSON: [JSONText.string("x")])
            _ = session.tick(now: Double(index))
        }
        _ = session.drain()
    }
    // WebSocket frames: a text frame, and a binary one.
    for version in EngineIOVersion.allCases {
        if case let .success(packet) = EngineIOPacket.decode(text: text[...], version) {
            precondition(
                EngineIOPacket.decode(text: packet.encodedText(version)[...], version) == .success(packet),
                "an Engine.IO packet does not round-trip")
        }
    }
    _ = EngineIOPacket.decode(binary: bytes[...])
    if let decoded = Base64.decode(text[...]) {
        precondition(Base64.decode(Base64.encode(decoded)[...]) == decoded, "base64 does not round-trip")
    }
    // The handshake's query parameters.
    _ = EngineIOVersion(query: text)
    let token = SocketIOPressPolicy.presentedToken(auth: JSONValue.parse(text), query: text)
    _ = SocketIOPressPolicy.token("secret").decide(token)
    // Socket.IO packets and their event data.
    if case let .success(packet) = SocketIOPacket.decode(text) {
        _ = packet.event()
        precondition(
            SocketIOPacket.decode(packet.encoded) == .success(packet), "a Socket.IO packet does not round-trip")
    }
    _ = JSONText.string(text)
    return 0
}
