import Testing
@testable import TrellisSocketIO

/// The framing of poll responses per client generation, and the text of engine.io-client 1.x's
/// POSTs, whose packets are UTF-8 encoded twice.
@Suite("Engine.IO framing of polls")
struct EngineIOFramingTests {
    @Test(
        "which framing answers a poll",
        arguments: [
            (EngineIOVersion.v3, nil, EngineIOFraming.binary, "application/octet-stream"),
            (.v3, "1", .text, "text/plain; charset=UTF-8"),
            (.v3, "true", .text, "text/plain; charset=UTF-8"),
            (.v4, nil, .records, "text/plain; charset=UTF-8"),
            (.v4, "1", .records, "text/plain; charset=UTF-8")
        ] as [(EngineIOVersion, String?, EngineIOFraming, String)])
    func framing(version: EngineIOVersion, b64: String?, framing: EngineIOFraming, contentType: String) {
        let chosen = EngineIOFraming(version: version, base64: b64)
        #expect(chosen == framing)
        #expect(chosen.contentType == contentType)
    }

    @Test("the binary framing counts UTF-8 bytes and writes them as they are")
    func binaryNonASCII() {
        let packet = EngineIOPacket(.message, #"2["button-press","Tür 🌱"]"#)
        let body = EngineIOPayload.encode([packet], .binary)
        let text = Array(#"42["button-press","Tür 🌱"]"#.utf8)
        #expect(text.count == 30)
        #expect(body == [0, 3, 0, 0xFF] + text)
        #expect(EngineIOPayload.decode(body, .v3) == .success([packet]))
    }

    @Test(
        "a poll body in each framing reads back as the same packets",
        arguments: [EngineIOFraming.text, .binary, .records])
    func roundTrip(framing: EngineIOFraming) {
        let packets = [
            EngineIOPacket(.open, #"{"sid":"é"}"#), EngineIOPacket(.message, #"2["a","ü😀"]"#), EngineIOPacket(.noop)
        ]
        let version: EngineIOVersion = framing == .records ? .v4 : .v3
        #expect(EngineIOPayload.decode(EngineIOPayload.encode(packets, framing), version) == .success(packets))
    }

    @Test("engine.io-client 1.x's text POST: each packet UTF-8 encoded into byte values, then the body again")
    func doublyEncodedPost() {
        // What engine.io-parser 1.2 makes of 42["register","Tür"]: "Tür" as the bytes of its UTF-8
        // (ü is C3 BC), each a character, the length counting them; the browser sends that as UTF-8.
        let inner = #"42["register","T\#u{C3}\#u{BC}r"]"#
        let body = Array("\(inner.unicodeScalars.count):\(inner)".utf8)
        #expect(EngineIOPayload.decode(body, .v3) == .success([EngineIOPacket(.message, #"2["register","Tür"]"#)]))
    }

    @Test(
        "text that only looks like bytes stays as it is",
        arguments: [
            "plain ASCII", "é alone is not UTF-8", "😀 is above 255", "ß and \u{FF}"
        ])
    func notDoublyEncoded(text: String) {
        #expect(EngineIOPayload.latin1UTF8Decoded(text[...]) == nil)
        let packet = EngineIOPacket(.message, #"2["x",\#(JSONString(text))]"#)
        #expect(EngineIOPayload.decode(Array(EngineIOPayload.encode([packet], .v3).utf8), .v3) == .success([packet]))
    }

    func JSONString(_ text: String) -> String { "\"\(text)\"" }
}
