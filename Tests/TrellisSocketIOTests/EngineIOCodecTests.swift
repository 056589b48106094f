import Testing
@testable import TrellisSocketIO

@Suite("Engine.IO packets and payload framings")
struct EngineIOCodecTests {
    @Test(
        "the EIO query parameter: absent means 3",
        arguments: [
            (nil, EngineIOVersion.v3), ("3", .v3), ("4", .v4)
        ] as [(String?, EngineIOVersion)])
    func versions(query: String?, expected: EngineIOVersion) {
        #expect(EngineIOVersion(query: query) == expected)
    }

    @Test("unsupported EIO values", arguments: ["2", "5", "", "three"])
    func unsupportedVersions(query: String) {
        #expect(EngineIOVersion(query: query) == nil)
    }

    @Test(
        "text packets",
        arguments: [
            ("2", EngineIOVersion.v3, EngineIOPacket(.ping)),
            ("2probe", .v3, EngineIOPacket(.ping, "probe")),
            ("3probe", .v4, EngineIOPacket(.pong, "probe")),
            ("5", .v4, EngineIOPacket(.upgrade)),
            ("6", .v3, EngineIOPacket(.noop)),
            ("1", .v3, EngineIOPacket(.close)),
            (#"42["register","test"]"#, .v3, EngineIOPacket(.message, #"2["register","test"]"#)),
            ("b4AQID", .v3, EngineIOPacket(binaryMessage: [1, 2, 3])),
            ("bAQID", .v4, EngineIOPacket(binaryMessage: [1, 2, 3]))
        ])
    func textPackets(text: String, version: EngineIOVersion, packet: EngineIOPacket) {
        #expect(EngineIOPacket.decode(text: text[...], version) == .success(packet))
        #expect(packet.encodedText(version) == text)
    }

    @Test(
        "malformed text packets",
        arguments: [
            ("", EngineIOVersion.v3, EngineIOError.emptyPacket),
            ("7", .v3, .unknownPacketType),
            ("x", .v4, .unknownPacketType),
            ("b2AQID", .v3, .unknownPacketType),
            ("b4AQI", .v3, .invalidBase64),
            ("b!!!!", .v4, .invalidBase64),
            ("bAQ=D", .v4, .invalidBase64)
        ])
    func malformedPackets(text: String, version: EngineIOVersion, error: EngineIOError) {
        #expect(EngineIOPacket.decode(text: text[...], version) == .failure(error))
    }

    @Test(
        "base64 round trip", arguments: [[], [0], [0, 1], [0, 1, 2], [255, 254, 253, 252], Array(0...255)] as [[UInt8]])
    func base64(bytes: [UInt8]) {
        #expect(Base64.decode(Base64.encode(bytes)[...]) == bytes)
    }

    @Test("Engine.IO 3 text framing counts UTF-16 code units, as JavaScript does")
    func textFraming() {
        let packets = [EngineIOPacket(.open, #"{"sid":"a"}"#), EngineIOPacket(.message, "0")]
        #expect(EngineIOPayload.encode(packets, .v3) == #"12:0{"sid":"a"}2:40"#)
        #expect(EngineIOPayload.encode([], .v3) == "0:")
        let emoji = EngineIOPacket(.message, #"2["press","🔘é"]"#)
        let encoded = EngineIOPayload.encode([emoji, EngineIOPacket(.ping)], .v3)
        #expect(encoded.hasPrefix("17:"))
        #expect(EngineIOPayload.decode(Array(encoded.utf8), .v3) == .success([emoji, EngineIOPacket(.ping)]))
    }

    @Test("Engine.IO 3 binary framing, as the Android client and python-engineio 3 post it")
    func binaryFraming() {
        // python-engineio 3.14.2 posting `2` then `42["register","b"]`.
        let body: [UInt8] = [0, 1, 0xFF, 0x32] + [0, 1, 8, 0xFF] + Array(#"42["register","b"]"#.utf8)
        let expected = [EngineIOPacket(.ping), EngineIOPacket(.message, #"2["register","b"]"#)]
        #expect(EngineIOPayload.decode(body, .v3) == .success(expected))
        #expect(EngineIOPayload.encodeBinary(expected) == body)
        let binary = EngineIOPayload.encodeBinary([EngineIOPacket(binaryMessage: [9, 8])])
        #expect(binary == [1, 3, 0xFF, 4, 9, 8])
        #expect(EngineIOPayload.decode(binary, .v3) == .success([EngineIOPacket(binaryMessage: [9, 8])]))
    }

    @Test("Engine.IO 4 separates packets with \\u{1e}")
    func separatorFraming() {
        let packets = [
            EngineIOPacket(.message, "0"), EngineIOPacket(.message, #"2["register","a"]"#),
            EngineIOPacket(binaryMessage: [7])
        ]
        let text = EngineIOPayload.encode(packets, .v4)
        #expect(text == "40\u{1e}42[\"register\",\"a\"]\u{1e}bBw==")
        #expect(EngineIOPayload.decode(Array(text.utf8), .v4) == .success(packets))
    }

    @Test(
        "malformed payloads",
        arguments: [
            (Array("12:40".utf8), EngineIOVersion.v3, EngineIOError.truncatedPayload),
            (Array(":40".utf8), .v3, .invalidLength),
            (Array("2x:40".utf8), .v3, .invalidLength),
            (Array("2".utf8), .v3, .invalidLength),
            (Array("9999999999:4".utf8), .v3, .invalidLength),
            (Array("1:7".utf8), .v3, .unknownPacketType),
            ([0, 5, 0xFF, 0x34], .v3, .truncatedPayload),
            ([0, 12, 0xFF, 0x34], .v3, .invalidLength),
            ([0, 1], .v3, .invalidLength),
            ([0, 2, 0xFF, 0x34, 0xC3], .v3, .invalidUTF8),
            ([1, 1, 0xFF, 2], .v3, .unknownPacketType),
            ([0xFF, 0xFE], .v4, .invalidUTF8),
            (Array("4\u{1e}\u{1e}2".utf8), .v4, .emptyPacket),
            ([], .v4, .emptyPacket)
        ] as [([UInt8], EngineIOVersion, EngineIOError)])
    func malformedPayloads(body: [UInt8], version: EngineIOVersion, error: EngineIOError) {
        #expect(EngineIOPayload.decode(body, version) == .failure(error))
    }

    @Test("a length that splits a surrogate pair is refused, not a crash")
    func splitSurrogate() {
        #expect(EngineIOPayload.decode(Array("2:4🔘".utf8), .v3) == .failure(.invalidLength))
    }

    @Test("a combining mark after the type digit stays in the data")
    func combiningMark() {
        #expect(EngineIOPacket.decode(text: "4\u{301}x"[...], .v3) == .success(EngineIOPacket(.message, "\u{301}x")))
        let packets = [EngineIOPacket(.message, "2\u{6DD}"), EngineIOPacket(.ping)]
        #expect(EngineIOPayload.decode(Array(EngineIOPayload.encode(packets, .v3).utf8), .v3) == .success(packets))
    }

    @Test("a body with too many packets is refused")
    func tooManyPackets() {
        let body = Array(String(repeating: "1:2", count: 10).utf8)
        #expect(EngineIOPayload.decode(body, .v3, maximumPackets: 5) == .failure(.payloadTooLarge))
    }
}
