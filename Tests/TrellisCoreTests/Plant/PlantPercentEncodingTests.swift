import Testing
@testable import TrellisCore

@Suite("PlantPercentEncoding")
struct PlantPercentEncodingTests {
    @Test(
        "encoding escapes exactly %, ; and :",
        arguments: [
            ("", ""),
            ("plain text", "plain text"),
            ("a;b:c%d", "a%3Bb%3Ac%25d"),
            ("100%", "100%25"),
            ("%3B", "%253B"),
            ("é;🌿:ü", "é%3B🌿%3Aü"),
            ("Bob's iPhone, 0x36 | - /", "Bob's iPhone, 0x36 | - /")
        ])
    func encode(_ input: String, _ expected: String) {
        #expect(PlantPercentEncoding.encode(input) == expected)
    }

    @Test(
        "decoding handles valid escapes and leaves anything else alone",
        arguments: [
            ("", ""),
            ("all", "all"),
            ("%3B%3A%25", ";:%"),
            ("%3b%3a", ";:"),
            ("%41%42c", "ABc"),
            ("100%", "100%"),
            ("50% off", "50% off"),
            ("%zz", "%zz"),
            ("%4", "%4"),
            ("%4g", "%4g"),
            ("%", "%"),
            ("%%3B", "%;"),
            ("%2541", "%41"),
            ("%C3%A9", "é"),
            ("caf%c3%a9", "café"),
            ("%F0%9F%8C%BF", "🌿"),
            ("%FF", "%FF"),
            ("%C3", "%C3"),
            ("%C3%41", "%C3A"),
            ("%E2%82", "%E2%82"),
            ("%ED%A0%80", "%ED%A0%80"),
            ("%C0%AF", "%C0%AF"),
            ("%F0%9F%8C", "%F0%9F%8C"),
            ("%A9%C3%A9", "%A9é"),
            ("é %3B 🌿", "é ; 🌿"),
            ("%00", "\u{0}")
        ])
    func decode(_ input: String, _ expected: String) {
        #expect(PlantPercentEncoding.decode(input) == expected)
    }

    @Test(
        "decode(encode(x)) == x",
        arguments: [
            "", "a", "%", "%%", "%41", "%C3%A9", "50% off; now: yes", "ID:1;sender:Bob",
            "Fougère 🌿;é:ü", #"{"count":1,"plants":[]}"#, String(repeating: ";:%", count: 1000)
        ])
    func roundTrip(_ text: String) {
        let encoded = PlantPercentEncoding.encode(text)
        #expect(!encoded.contains(";"))
        #expect(!encoded.contains(":"))
        #expect(PlantPercentEncoding.decode(encoded) == text)
    }
}
