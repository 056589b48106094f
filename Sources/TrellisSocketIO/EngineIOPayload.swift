/// A long-polling body: several Engine.IO packets in one HTTP request or response.
///
/// Three framings exist:
/// - Engine.IO 3 text: `<length>:<packet>` repeated, the length counted in UTF-16 code units as
///   JavaScript counts a string (socket.io-client-swift, browsers, anything that sent `b64=1`);
/// - Engine.IO 3 binary: per packet a `0` (text) or `1` (binary) byte, the length as one byte per
///   decimal digit, `0xFF`, then the packet's bytes (the Java client of the Android app, and
///   python-engineio 3, post their bodies this way);
/// - Engine.IO 4: text packets joined by the record separator `\u{1e}`.
///
/// A poll is answered in the framing ``EngineIOFraming`` picks for its request, as the node server
/// each generation was written against did; a POST body is read in whichever framing it uses.
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

    /// The body of a poll response in `framing`.
    public static func encode(_ packets: [EngineIOPacket], _ framing: EngineIOFraming) -> [UInt8] {
        switch framing {
        case .text: Array(encode(packets, .v3).utf8)
        case .binary: encodeBinary(packets)
        case .records: Array(encode(packets, .v4).utf8)
        }
    }

    /// The Engine.IO 3 binary framing of `packets`: lengths count UTF-8 bytes.
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
    public static func decode(_ body: [UInt8], _ version: EngineIOVersion, maximumPackets: Int = 256) -> Result<
        [EngineIOPacket], EngineIOError
    > {
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
            guard let lower = String.Index(index, within: scalars), let upper = String.Index(end, within: scalars)
            else {
                return .failure(.invalidLength)
            }
            let piece = Substring(scalars[lower..<upper])
            switch EngineIOPacket.decode(text: latin1UTF8Decoded(piece).map { $0[...] } ?? piece, .v3) {
            case let .success(packet): packets.append(packet)
            case let .failure(error): return .failure(error)
            }
            index = end
        }
        return .success(packets)
    }

    /// Engine.IO 3 binary framing.
    static func decodeBinary(_ body: ArraySlice<UInt8>, maximumPackets: Int) -> Result<[EngineIOPacket], EngineIOError>
    {
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

extension EngineIOPayload {
    /// The text of a packet that engine.io-client 1.x posted: its parser (engine.io-parser 1.2)
    /// UTF-8-encodes every packet of a text-framed POST into a string of byte values, which the
    /// browser encodes as UTF-8 once more, so `é` arrives as `Ã©` and the length counts bytes.
    /// Returns the text decoded once more when it is such a string (every scalar below 256, one at
    /// least 128, and the byte values valid UTF-8); nil when it is text as it stands. Only text made
    /// of Latin-1 letters that happen to spell valid UTF-8 (such as `Ã©` typed as such) is misread.
    static func latin1UTF8Decoded(_ text: Substring) -> String? {
        var bytes = [UInt8]()
        var high = false
        for scalar in text.unicodeScalars {
            guard scalar.value <= 0xFF else { return nil }
            if scalar.value >= 0x80 { high = true }
            bytes.append(UInt8(scalar.value))
        }
        guard high else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// How a long-poll response is framed. Engine.IO 3 servers of the socket.io 1.x and 2.x generation
/// (engine.io 1.x/2.x) answered a poll in the binary framing unless the client asked for base64
/// (`b64=1`): engine.io-client 1.5 in a browser reads any other body as the string `ok` and starts
/// again, and 1.6 to 1.8 read a text body byte by byte, mangling what is not ASCII. Clients that
/// cannot read binary (socket.io-client-swift, browsers without XHR2) send `b64=1`.
public enum EngineIOFraming: Sendable, Equatable {
    /// Engine.IO 3 with `b64=1`: `<length>:<packet>`, lengths in UTF-16 code units.
    case text
    /// Engine.IO 3 without `b64`: type byte, length digits, `0xFF`, packet bytes.
    case binary
    /// Engine.IO 4: packets separated by `\u{1e}`.
    case records

    /// The framing of a poll of `version` whose `b64` query parameter is `base64`.
    public init(version: EngineIOVersion, base64: String?) {
        switch version {
        // engine.io 1.x tested only that the parameter is there.
        case .v3: self = base64 == nil ? .binary : .text
        case .v4: self = .records
        }
    }

    /// The response's `Content-Type`, by which engine.io-client tells the binary framing apart.
    public var contentType: String {
        switch self {
        case .binary: "application/octet-stream"
        case .text, .records: "text/plain; charset=UTF-8"
        }
    }
}
