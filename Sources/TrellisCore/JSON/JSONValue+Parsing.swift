#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension JSONValue {
    /// The value of JSON text from an untrusted peer, nil when it is empty, not JSON, or nests
    /// arrays and objects deeper than `maximumDepth` levels (the decoder recurses once per level,
    /// so hostile text must not choose the stack depth).
    public static func parse(_ text: String, maximumDepth: Int = 32) -> JSONValue? {
        guard !text.isEmpty, nestingDepth(text) <= maximumDepth else { return nil }
        return try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    /// The deepest bracket nesting, counted without regard to strings (an upper bound).
    static func nestingDepth(_ text: String) -> Int {
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
