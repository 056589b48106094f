import Testing
import TrellisCore

@Suite("JSON text: the shared string writer and the depth-limited parser")
struct JSONTextTests {
    @Test(
        "string literals",
        arguments: [
            ("plain", #""plain""#), ("a\"b", #""a\"b""#), ("back\\slash", #""back\\slash""#),
            ("line\nbreak\r\t", #""line\nbreak\r\t""#), ("\u{0}\u{1F}", #""\u0000\u001f""#),
            ("\u{8}\u{C}\u{7F}", #""\b\f\u007f""#), ("a\u{2028}b\u{2029}", #""a\u2028b\u2029""#),
            ("/ü🔘", "\"/ü🔘\"")
        ])
    func literals(value: String, json: String) {
        #expect(JSONText.string(value) == json)
        #expect(JSONValue.parse(json) == .string(value))
    }

    @Test("parsing keeps integers apart from other numbers")
    func numbers() {
        #expect(
            JSONValue.parse(#"[1,1.5,-2,true,null,{"a":"b"}]"#)
                == .array([.integer(1), .number(1.5), .integer(-2), .bool(true), .null, .object(["a": .string("b")])]))
    }

    @Test("nesting up to the limit is read, deeper is refused", arguments: [(32, true), (33, false)])
    func depth(levels: Int, accepted: Bool) {
        let text = String(repeating: "[", count: levels) + String(repeating: "]", count: levels)
        #expect((JSONValue.parse(text) != nil) == accepted)
        #expect((JSONValue.parse(text, maximumDepth: levels) != nil))
    }

    @Test("what is not JSON text", arguments: ["", "[", "{\"a\"}", "nope", "[1 2]"])
    func invalid(text: String) {
        #expect(JSONValue.parse(text) == nil)
    }
}
