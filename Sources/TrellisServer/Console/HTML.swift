/// A piece of HTML whose every interpolated string is escaped: `"<td>\(name)</td>"` as an ``HTML``
/// writes `name` as text, so a plant name, a device's log line or a dead letter's payload (all
/// chosen by whoever publishes) can never open a tag, end an attribute or start a script. Only
/// literals and other ``HTML`` values are written as they are; ``init(raw:)`` is for the few
/// fixed fragments built elsewhere (the SVG chart's numbers).
struct HTML: Sendable, Equatable, ExpressibleByStringInterpolation, CustomStringConvertible {
    private(set) var text: String

    /// Markup written as it is: only for text that holds no value from outside.
    init(raw: String) {
        text = raw
    }

    init(stringLiteral value: String) {
        text = value
    }

    init(stringInterpolation: StringInterpolation) {
        text = stringInterpolation.text
    }

    var description: String { text }

    /// The pieces one after another.
    init(joining pieces: [HTML], separator: HTML = "") {
        text = pieces.map(\.text).joined(separator: separator.text)
    }

    /// Builds the text: literals as they are, strings escaped, ``HTML`` as it is.
    struct StringInterpolation: StringInterpolationProtocol {
        var text = ""

        init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + interpolationCount * 16)
        }

        mutating func appendLiteral(_ literal: String) {
            text += literal
        }

        mutating func appendInterpolation(_ value: String) {
            text += HTML.escape(value)
        }

        mutating func appendInterpolation(_ value: Int) {
            text += String(value)
        }

        mutating func appendInterpolation(_ html: HTML) {
            text += html.text
        }

        mutating func appendInterpolation(_ pieces: [HTML]) {
            for piece in pieces { text += piece.text }
        }
    }

    /// `value` as text in an element or a double- or single-quoted attribute: `&`, `<`, `>`, `"`
    /// and `'` become references, and the C0 controls a parser would refuse (NUL among them)
    /// become U+FFFD, so nothing in `value` is ever read as markup.
    static func escape(_ value: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            case "\t", "\n", "\r": escaped.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: escaped += "\u{FFFD}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// `segment` as one path segment of a link (`/plants/<segment>`): every byte but the unreserved
    /// ones percent-encoded, so a name holding `/`, `?`, `#` or `..` stays one segment; the router
    /// decodes it again (``ConsoleServer``).
    static func pathSegment(_ segment: String) -> String {
        var encoded = ""
        for byte in segment.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                encoded += byte < 16 ? "%0\(hex)" : "%\(hex)"
            }
        }
        return encoded
    }
}
