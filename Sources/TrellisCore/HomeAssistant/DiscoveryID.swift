/// Home Assistant's discovery ids (`node_id`, `object_id`, and by convention `unique_id`) may
/// only hold `A–Z`, `a–z`, `0–9`, `_` and `-`; anything else is silently dropped, which could
/// make two things one. Trellis's own ids (button ids, device ids) can hold more, so they are
/// written with every other byte, `_` included, as `_` and two lower-case hex digits: the
/// mapping is one-to-one, and ids made only of letters, digits and `-` stay as they are.
public enum DiscoveryID {
    /// `id` written with only the characters discovery allows, one-to-one.
    public static func encode(_ id: String) -> String {
        var out = ""
        out.reserveCapacity(id.utf8.count)
        for byte in id.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "_" + String(byte, radix: 16).leftPadded(to: 2)
            }
        }
        return out
    }

    /// The id `encode` wrote as `text`, nil when `text` is not something `encode` writes (a byte
    /// it would have escaped, an escape it would not have made, or bytes that are not UTF-8).
    public static func decode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var input = text.utf8.makeIterator()
        while let byte = input.next() {
            if byte == UInt8(ascii: "_") {
                guard let high = input.next().flatMap(hexValue), let low = input.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        guard let id = String(validating: bytes, as: UTF8.self), encode(id).utf8.elementsEqual(text.utf8) else {
            return nil
        }
        return id
    }

    /// The value of a lower-case hex digit.
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// Whether `text` is usable as a discovery id as it is.
    public static func isValid(_ text: String) -> Bool {
        !text.isEmpty
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
    }
}
