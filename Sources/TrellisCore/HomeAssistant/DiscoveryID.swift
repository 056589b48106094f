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

    /// Whether `text` is usable as a discovery id as it is.
    public static func isValid(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"): true
            default: false
            }
        }
    }
}
