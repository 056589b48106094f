#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Percent-encoding of plant-tracker payloads.
///
/// The wire format separates fields with `;` and keys from values with `:`, so a payload
/// containing either would break the message. Trellis therefore encodes exactly `%`, `;` and
/// `:` as `%25`, `%3B` and `%3A` when it writes a payload, and decodes valid `%XX` escapes when
/// it reads one. Decoding is forgiving because older clients send raw `%`: a `%` that does not
/// start a two-hex-digit escape, or escapes whose bytes do not form valid UTF-8, stay as written.
public enum PlantPercentEncoding {
    /// Encodes `%`, `;` and `:`; every other character is written unchanged.
    public static func encode(_ text: String) -> String {
        guard text.utf8.contains(where: needsEscape) else { return text }
        var out: [UInt8] = []
        append(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the UTF-8 bytes of `text`, encoded, to `out`: runs of plain bytes are copied whole,
    /// since the three escaped characters are ASCII and never part of a multi-byte sequence.
    public static func append(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for index in bytes.indices where needsEscape(bytes[index]) {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                out.append(0x25)
                switch bytes[index] {
                case 0x25: out.append(0x32); out.append(0x35)
                case 0x3B: out.append(0x33); out.append(0x42)
                default: out.append(0x33); out.append(0x41)
                }
                start = index + 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
    }

    private static func needsEscape(_ byte: UInt8) -> Bool { byte == 0x25 || byte == 0x3B || byte == 0x3A }

    /// Decodes valid `%XX` escapes (any hex case), leaving everything else as it is.
    ///
    /// Consecutive escapes are decoded together so multi-byte UTF-8 sequences such as
    /// `%C3%A9` become `é`; an escaped byte that is not part of a valid UTF-8 sequence keeps
    /// its original `%XX` spelling.
    public static func decode(_ text: String) -> String {
        // Every plant message's payload comes through here, most with no escape: its UTF-8 is
        // searched at once (`memchr`), not byte by byte through the string's view.
        var contiguous = text
        guard contiguous.withUTF8({ $0.count > 0 && memchr($0.baseAddress!, 0x25, $0.count) != nil }) else {
            return text
        }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            guard bytes[i] == 0x25, escapedByte(bytes, at: i) != nil else {
                out.append(bytes[i])
                i += 1
                continue
            }
            var run: [(value: UInt8, start: Int)] = []
            while i < bytes.count, bytes[i] == 0x25, let value = escapedByte(bytes, at: i) {
                run.append((value, i))
                i += 3
            }
            appendDecodedRun(run, source: bytes, to: &out)
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func appendDecodedRun(_ run: [(value: UInt8, start: Int)], source: [UInt8], to out: inout [UInt8]) {
        let values = run.map(\.value)
        var j = 0
        while j < values.count {
            let length = sequenceLength(lead: values[j])
            if length > 0, j + length <= values.count,
                String(validating: values[j..<(j + length)], as: UTF8.self) != nil
            {
                out.append(contentsOf: values[j..<(j + length)])
                j += length
            } else {
                let start = run[j].start
                out.append(contentsOf: source[start..<(start + 3)])
                j += 1
            }
        }
    }

    private static func sequenceLength(lead: UInt8) -> Int {
        switch lead {
        case 0x00...0x7F: 1
        case 0xC2...0xDF: 2
        case 0xE0...0xEF: 3
        case 0xF0...0xF4: 4
        default: 0
        }
    }

    private static func escapedByte(_ bytes: [UInt8], at index: Int) -> UInt8? {
        guard index + 2 < bytes.count, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
        else {
            return nil
        }
        return high << 4 | low
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}

/// A reply payload together with its percent-encoded UTF-8 form, so that a payload sent in
/// many replies (the sensor data of a burst of requests) is encoded once.
public struct EncodedPlantPayload: Sendable, Equatable {
    /// The plain text.
    public let text: String
    /// `text` percent-encoded, as it appears on the wire.
    public let wire: [UInt8]

    public init(_ text: String) {
        var wire: [UInt8] = []
        wire.reserveCapacity(text.utf8.count)
        PlantPercentEncoding.append(text, to: &wire)
        self.text = text
        self.wire = wire
    }
}
