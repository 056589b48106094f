/// JSON text written by hand, for the places that build a line or a packet around a few values
/// instead of encoding a whole `Encodable` (capture lines, Socket.IO packets).
public enum JSONText {
    /// `value` as a JSON string literal: `"` and `\` escaped, control characters (and DEL) as
    /// `\n` `\r` `\t` `\b` `\f` or `\u00XX`, and U+2028/U+2029 as `\u2028`/`\u2029` so the text is
    /// also a valid JavaScript string literal.
    /// Everything else, including text outside ASCII, is written as is.
    public static func string(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _
            where scalar.value < 0x20 || scalar.value == 0x7F || scalar.value == 0x2028 || scalar.value == 0x2029:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
