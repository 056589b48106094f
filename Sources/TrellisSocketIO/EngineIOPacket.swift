#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The two Engine.IO generations served on one path. Engine.IO 3 goes with Socket.IO 4 (the
/// socket.io 1.x/2.x libraries), Engine.IO 4 with Socket.IO 5 (socket.io 3.x and later).
public enum EngineIOVersion: Int, Sendable, CaseIterable, CustomStringConvertible {
    case v3 = 3
    case v4 = 4

    /// The version a request's `EIO` query parameter asks for. An absent parameter means 3: the
    /// socket.io-client-swift 6 generation sends none. Anything else is unsupported (nil).
    public init?(query value: String?) {
        guard let value else { self = .v3; return }
        switch value {
        case "3": self = .v3
        case "4": self = .v4
        default: return nil
        }
    }

    public var description: String { "Engine.IO \(rawValue)" }
}

/// The type digit that starts every Engine.IO packet.
public enum EngineIOPacketType: UInt8, Sendable, CaseIterable {
    case open = 0, close, ping, pong, message, upgrade, noop

    /// The ASCII digit of the type.
    public var digit: Character { Character(Unicode.Scalar(0x30 + rawValue)) }
}

/// One Engine.IO packet: a type and its data, text or (for `message`) binary.
public struct EngineIOPacket: Sendable, Equatable, CustomStringConvertible {
    /// The data of a packet.
    public enum Data: Sendable, Equatable {
        case text(String)
        case binary([UInt8])
    }

    public var type: EngineIOPacketType
    public var data: Data

    public init(_ type: EngineIOPacketType, _ text: String = "") {
        self.type = type
        self.data = .text(text)
    }

    public init(binaryMessage bytes: [UInt8]) {
        self.type = .message
        self.data = .binary(bytes)
    }

    /// The data as text; binary data has none.
    public var text: String? {
        if case let .text(text) = data { return text }
        return nil
    }

    public var description: String {
        switch data {
        case let .text(text): "\(type.rawValue)\(text)"
        case let .binary(bytes): "binary \(type.rawValue) (\(bytes.count) bytes)"
        }
    }

    /// The packet as a text frame (a WebSocket text message or one packet of a text payload).
    /// Binary data is written in base64 behind `b4` (Engine.IO 3) or `b` (Engine.IO 4).
    public func encodedText(_ version: EngineIOVersion) -> String {
        switch data {
        case let .text(text):
            return String(type.digit) + text
        case let .binary(bytes):
            let prefix = version == .v3 ? "b\(type.rawValue)" : "b"
            return prefix + Base64.encode(bytes)
        }
    }

    /// Decodes a text frame. A `b…` frame is a base64 binary message.
    public static func decode(text: Substring, _ version: EngineIOVersion) -> Result<EngineIOPacket, EngineIOError> {
        // The type is one ASCII byte; what follows is sliced by bytes, so a combining mark after
        // the type digit stays in the data instead of merging with the digit.
        let utf8 = text.utf8
        guard let first = utf8.first else { return .failure(.emptyPacket) }
        var rest = utf8.dropFirst()
        if first == UInt8(ascii: "b") {
            var type = EngineIOPacketType.message
            if version == .v3 {
                guard let digit = rest.first, let parsed = packetType(digit) else {
                    return .failure(.unknownPacketType)
                }
                type = parsed
                rest = rest.dropFirst()
            }
            guard type == .message else { return .failure(.unknownPacketType) }
            guard let bytes = Base64.decode(Substring(rest)) else { return .failure(.invalidBase64) }
            return .success(EngineIOPacket(binaryMessage: bytes))
        }
        guard let type = packetType(first) else { return .failure(.unknownPacketType) }
        return .success(EngineIOPacket(type, String(Substring(rest))))
    }

    /// Decodes a binary WebSocket frame or binary-framed packet: a type byte (a raw value, not a
    /// digit) followed by the data.
    public static func decode(binary bytes: ArraySlice<UInt8>) -> Result<EngineIOPacket, EngineIOError> {
        guard let first = bytes.first else { return .failure(.emptyPacket) }
        guard first == EngineIOPacketType.message.rawValue else { return .failure(.unknownPacketType) }
        return .success(EngineIOPacket(binaryMessage: Array(bytes.dropFirst())))
    }

    static func packetType(_ digit: UInt8) -> EngineIOPacketType? {
        guard digit >= 0x30 else { return nil }
        return EngineIOPacketType(rawValue: digit - 0x30)
    }
}

/// Why bytes from a client are not Engine.IO; the raw value labels the malformed-packet metric.
public enum EngineIOError: String, Error, Sendable, Equatable, CaseIterable {
    case emptyPacket = "empty_packet"
    case unknownPacketType = "unknown_packet_type"
    case invalidBase64 = "invalid_base64"
    case invalidLength = "invalid_length"
    case truncatedPayload = "truncated_payload"
    case invalidUTF8 = "invalid_utf8"
    case payloadTooLarge = "payload_too_large"
}
