/// A small JSON reader for capture lines (they are written with ``JSONText``).
///
/// The reader works on bytes, so it can say exactly where a line goes wrong, keeps the order
/// and duplicates of object members (`mosquitto_sub` writes user properties as an object whose
/// names may repeat), keeps the raw text of each value (a `%J` payload embedded as JSON), and
/// keeps bytes that are not UTF-8 inside strings as they are (`mosquitto_sub -F '%j'` writes
/// binary payloads raw).
enum CaptureJSON {
    indirect enum Value {
        case null
        case bool(Bool)
        case number(String)
        case string([UInt8])
        case array([Value])
        case object([Member])

        var typeName: String {
            switch self {
            case .null: "null"
            case .bool: "a boolean"
            case .number: "a number"
            case .string: "a string"
            case .array: "an array"
            case .object: "an object"
            }
        }
    }

    struct Member {
        var name: String
        var value: Value
        /// The value's text exactly as it stands in the line.
        var raw: ArraySlice<UInt8>
    }

    struct SyntaxError: Error {
        /// 1-based column (byte offset) of the problem.
        var column: Int
        var message: String
    }

    /// Parses one JSON value that must fill `bytes` (surrounding whitespace aside).
    static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> Value {
        var reader = Reader(bytes: bytes)
        reader.skipSpace()
        let value = try reader.value()
        reader.skipSpace()
        guard reader.index == bytes.count else { throw reader.error("unexpected text after the JSON object") }
        return value
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0
        /// Arrays and objects open around the current value. A capture line nests two levels;
        /// the cap keeps hostile input from exhausting the stack.
        var depth = 0
        static let maximumDepth = 64

        func error(_ message: String) -> SyntaxError {
            SyntaxError(column: index + 1, message: message)
        }

        mutating func enter() throws(SyntaxError) {
            depth += 1
            guard depth <= Self.maximumDepth else {
                throw error("values are nested more than \(Self.maximumDepth) levels deep")
            }
        }

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func value() throws(SyntaxError) -> Value {
            guard index < bytes.count else { throw error("the line ends where a value should be") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object()
            case UInt8(ascii: "["): return try array()
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            default: throw error("expected a JSON value, found \(describe(bytes[index]))")
            }
        }

        mutating func literal(_ word: String) throws(SyntaxError) {
            let expected = Array(word.utf8)
            guard bytes.count - index >= expected.count, Array(bytes[index..<(index + expected.count)]) == expected
            else {
                throw error("expected a JSON value, found \(describe(bytes[index]))")
            }
            index += expected.count
        }

        mutating func number() throws(SyntaxError) -> String {
            let start = index
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            func digits() -> Int {
                let from = index
                while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
                return index - from
            }
            guard digits() > 0 else { throw error("a number needs digits") }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw error("a number needs digits after the decimal point") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard digits() > 0 else { throw error("a number needs digits in its exponent") }
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        mutating func string() throws(SyntaxError) -> [UInt8] {
            index += 1
            var out: [UInt8] = []
            while true {
                guard index < bytes.count else { throw error("the line ends inside a string") }
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return out
                case UInt8(ascii: "\\"):
                    index += 1
                    guard index < bytes.count else { throw error("the line ends inside a string") }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800...0xDBFF).contains(scalar) {
                            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"),
                                bytes[index + 1] == UInt8(ascii: "u")
                            else {
                                throw error("a \\u escape of a high surrogate must be followed by a low surrogate")
                            }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00...0xDFFF).contains(low) else {
                                throw error("invalid low surrogate in a \\u escape")
                            }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00...0xDFFF).contains(scalar) {
                            throw error("a lone low surrogate in a \\u escape")
                        }
                        out.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
                    default:
                        index -= 2
                        throw error("invalid escape \\\(String(decoding: [escape], as: UTF8.self)) in a string")
                    }
                default:
                    guard byte >= 0x20 else {
                        throw error("a control character (\(describe(byte))) inside a string must be escaped")
                    }
                    out.append(byte)
                    index += 1
                }
            }
        }

        mutating func hex4() throws(SyntaxError) -> UInt32 {
            guard bytes.count - index >= 4,
                let value = UInt32(String(decoding: bytes[index..<(index + 4)], as: UTF8.self), radix: 16)
            else { throw error("a \\u escape needs four hex digits") }
            index += 4
            return value
        }

        mutating func array() throws(SyntaxError) -> Value {
            try enter()
            defer { depth -= 1 }
            index += 1
            var items: [Value] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            while true {
                skipSpace()
                items.append(try value())
                skipSpace()
                guard index < bytes.count else { throw error("the line ends inside an array") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
                throw error("expected , or ] in an array, found \(describe(bytes[index]))")
            }
        }

        mutating func object() throws(SyntaxError) -> Value {
            try enter()
            defer { depth -= 1 }
            index += 1
            var members: [Member] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipSpace()
                guard index < bytes.count else { throw error("the line ends inside an object") }
                guard bytes[index] == UInt8(ascii: "\"") else {
                    throw error("expected a quoted field name, found \(describe(bytes[index]))")
                }
                let nameBytes = try string()
                guard let name = String(validating: nameBytes, as: UTF8.self) else {
                    throw error("a field name is not valid UTF-8")
                }
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                    throw error("expected : after the field name \"\(name)\"")
                }
                index += 1
                skipSpace()
                let start = index
                let value = try value()
                members.append(Member(name: name, value: value, raw: bytes[start..<index]))
                skipSpace()
                guard index < bytes.count else { throw error("the line ends inside an object") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                throw error("expected , or } in an object, found \(describe(bytes[index]))")
            }
        }

        func describe(_ byte: UInt8) -> String {
            if (0x21...0x7E).contains(byte) { return "'\(String(decoding: [byte], as: UTF8.self))'" }
            return "byte 0x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16)
        }
    }
}
