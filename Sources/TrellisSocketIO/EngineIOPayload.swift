/// A long-polling body: several Engine.IO packets in one HTTP request or response.
///
/// Three framings exist:
/// - Engine.IO 3 text: `<length>:<packet>` repeated, the length counted in UTF-16 code units as
///   JavaScript counts a string (socket.io-client-swift, browsers, anything that sent `b64=1`);
/// - Engine.IO 3 binary: per packet a `0` (text) or `1` (binary) byte, the length as one byte per
///   decimal digit, `0xFF`, then the packet's bytes (the Java client of the Android app, and
///   python-engineio 3, post their bodies this way);
/// - Engine.IO 4: text packets joined by the record separator `\u{1e}`.
public enum EngineIOPayload {
    /// The record separator between Engine.IO 4 packets.
    public static let separator: Character = "\u{1e}"

    /// The body of a poll response: text framing for Engine.IO 3, separators for Engine.IO 4.
    public static func encode(_ packets: [EngineIOPacket], _ version: EngineIOVersion) -> String {
        switch version {
        case .v3:
            if packets.isEmpty { return "0:" }
            return packets.map { packet in
                let text = packet.encodedText(.v3)
                return "\(text.utf16.count):\(text)"
            }.joined()
        case .v4:
            return packets.map { $0.encodedText(.v4) }.joined(separator: String(separator))
        }
    }

    /// The Engine.IO 3 binary framing of `packets`.
    public static func encodeBinary(_ packets: [EngineIOPacket]) -> [UInt8] {
        var out = [UInt8]()
        for packet in packets {
            let body: [UInt8]
            switch packet.data {
            case let .text(text):
                out.append(0)
                body = Array((String(packet.type.digit) + text).utf8)
            case let .binary(bytes):
                out.append(1)
                body = [packet.type.rawValue] + bytes
            }
            out += String(body.count).utf8.map { $0 - 0x30 }
            out.append(0xFF)
            out += body
        }
        return out
    }

    /// Decodes a POST body. Engine.IO 3 bodies starting with a `0` or `1` byte are binary framing,
    /// the others text framing; Engine.IO 4 bodies are separated text.
    public static func decode(_ body: [UInt8], _ version: EngineIOVersion, maximumPackets: Int = 256) -> Result<[EngineIOPacket], EngineIOError> {
        guard !body.isEmpty else { return .failure(.emptyPacket) }
        if version == .v3, body[0] <= 1 { return decodeBinary(body[...], maximumPackets: maximumPackets) }
        guard let text = String(validating: body, as: UTF8.self) else { return .failure(.invalidUTF8) }
        switch version {
        case .v3: return decodeText(text, maximumPackets: maximumPackets)
        case .v4:
            var packets = [EngineIOPacket]()
            for piece in text.split(separator: separator, omittingEmptySubsequences: false) {
                guard packets.count < maximumPackets else { return .failure(.payloadTooLarge) }
                switch EngineIOPacket.decode(text: piece, .v4) {
                case let .success(packet): packets.append(packet)
                case let .failure(error): return .failure(error)
                }
            }
            return .success(packets)
        }
    }

    /// Engine.IO 3 text framing.
    static func decodeText(_ text: String, maximumPackets: Int) -> Result<[EngineIOPacket], EngineIOError> {
        let units = text.utf16
        var index = units.startIndex
        var packets = [EngineIOPacket]()
        while index != units.endIndex {
            guard packets.count < maximumPackets else { return .failure(.payloadTooLarge) }
            var length = 0
            var digits = 0
            while index != units.endIndex, units[index] != 0x3A {
                let unit = units[index]
                guard (0x30...0x39).contains(unit), digits < 9 else { return .failure(.invalidLength) }
                length = length * 10 + Int(unit - 0x30)
                digits += 1
                index = units.index(after: index)
            }
            guard index != units.endIndex, digits > 0 else { return .failure(.invalidLength) }
            index = units.index(after: index)
            guard let end = units.index(index, offsetBy: length, limitedBy: units.endIndex) else {
                return .failure(.truncatedPayload)
            }
            // A length that splits a surrogate pair ends inside a scalar: refused. (Grapheme
            // clusters may be split, as JavaScript counts code units.)
            let scalars = text.unicodeScalars
            guard let lower = String.Index(index, within: scalars), let upper = String.Index(end, within: scalars) else {
                return .failure(.invalidLength)
            }
            switch EngineIOPacket.decode(text: Substring(scalars[lower..<upper]), .v3) {
            case let .success(packet): packets.append(packet)
            case let .failure(error): return .failure(error)
            }
            index = end
        }
        return .success(packets)
    }

    /// Engine.IO 3 binary framing.
    static func decodeBinary(_ body: ArraySlice<UInt8>, maximumPackets: Int) -> Result<[EngineIOPacket], EngineIOError> {
        var rest = body
        var packets = [EngineIOPacket]()
        while let kind = rest.first {
            guard packets.count < maximumPackets else { return .failure(.payloadTooLarge) }
            guard kind <= 1 else { return .failure(.invalidLength) }
            rest = rest.dropFirst()
            var length = 0
            var digits = 0
            while let byte = rest.first, byte != 0xFF {
                guard byte <= 9, digits < 9 else { return .failure(.invalidLength) }
                length = length * 10 + Int(byte)
                digits += 1
                rest = rest.dropFirst()
            }
            guard !rest.isEmpty, digits > 0 else { return .failure(.invalidLength) }
            rest = rest.dropFirst()
            guard rest.count >= length else { return .failure(.truncatedPayload) }
            let packetBytes = rest.prefix(length)
            rest = rest.dropFirst(length)
            if kind == 1 {
                switch EngineIOPacket.decode(binary: packetBytes) {
                case let .success(packet): packets.append(packet)
                case let .failure(error): return .failure(error)
                }
            } else {
                guard let text = String(validating: packetBytes, as: UTF8.self) else { return .failure(.invalidUTF8) }
                switch EngineIOPacket.decode(text: text[...], .v3) {
                case let .success(packet): packets.append(packet)
                case let .failure(error): return .failure(error)
                }
            }
        }
        return .success(packets)
    }
}
