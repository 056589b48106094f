#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A JSON value among an event's arguments.
public enum SocketIOValue: Sendable, Equatable, Decodable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([SocketIOValue])
    case object([String: SocketIOValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([SocketIOValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: SocketIOValue].self))
        }
    }

    /// The value of JSON text, nil when it is not JSON (or nests deeper than 32 levels).
    public static func parse(_ text: String) -> SocketIOValue? {
        guard !text.isEmpty, nestingDepth(text) <= 32 else { return nil }
        return try? JSONDecoder().decode(SocketIOValue.self, from: Data(text.utf8))
    }

    /// The deepest bracket nesting, counted without regard to strings (an upper bound).
    private static func nestingDepth(_ text: String) -> Int {
        var depth = 0, deepest = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "{") {
                depth += 1
                deepest = max(deepest, depth)
            } else if byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") {
                depth -= 1
            }
        }
        return deepest
    }
}

/// JSON text for the few values the server writes itself.
public enum JSONText {
    /// A JSON string literal: quotes, backslashes and control characters escaped.
    public static func string(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x2028 || scalar.value == 0x2029:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
