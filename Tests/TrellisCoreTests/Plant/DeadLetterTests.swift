import Testing
@testable import TrellisCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

private let received = Date(timeIntervalSince1970: 1_795_344_065.123)

private func json(_ letter: DeadLetter) -> String {
    String(decoding: letter.json(), as: UTF8.self)
}

@Suite("DeadLetter")
struct DeadLetterTests {
    @Test(
        "payloads render as text when UTF-8 and as base64 otherwise",
        arguments: [
            (
                "invalid_op", "rpi/torpi", Array(#"hello "x"/y"#.utf8),
                #"{"payload":"hello \"x\"/y","reason":"invalid_op","received_at":"2026-11-22T10:41:05.123Z","topic":"rpi/torpi"}"#
            ),
            (
                "empty", "rpi/torpi", [],
                #"{"payload":"","reason":"empty","received_at":"2026-11-22T10:41:05.123Z","topic":"rpi/torpi"}"#
            ),
            (
                "spam_muted", "rpi/torpi", Array("Zoë 🌿".utf8),
                #"{"payload":"Zoë 🌿","reason":"spam_muted","received_at":"2026-11-22T10:41:05.123Z","topic":"rpi/torpi"}"#
            ),
            (
                "invalid_utf8", "rpi/sensors/0x36", [0xFF, 0x00, 0x41],
                #"{"payload_base64":"/wBB","reason":"invalid_utf8","received_at":"2026-11-22T10:41:05.123Z","topic":"rpi/sensors/0x36"}"#
            )
        ] as [(String, String, [UInt8], String)])
    func rendering(_ reason: String, _ topic: String, _ payload: [UInt8], _ expected: String) {
        let letter = DeadLetter(reason: reason, topic: topic, payload: payload, receivedAt: received)
        #expect(letter.payload == payload)
        #expect(letter.size == payload.count)
        #expect(!letter.truncated)
        #expect(json(letter) == expected)
    }

    @Test("exactly 64 KiB is kept whole")
    func limitIsInclusive() {
        let letter = DeadLetter(
            reason: "big", topic: "t", payload: Array(repeating: 0x61, count: 65_536), receivedAt: received)
        #expect(!letter.truncated)
        #expect(letter.payload.count == 65_536)
        #expect(!json(letter).contains("truncated"))
    }

    @Test("larger text payloads are truncated and flagged")
    func truncatedText() {
        let letter = DeadLetter(
            reason: "big", topic: "t", payload: Array(repeating: 0x61, count: 102_400), receivedAt: received)
        #expect(letter.truncated)
        #expect(letter.payload.count == 65_536)
        #expect(letter.size == 102_400)
        let a = String(repeating: "a", count: 65_536)
        #expect(
            json(letter)
                == #"{"payload":"\#(a)","reason":"big","received_at":"2026-11-22T10:41:05.123Z","size":102400,"topic":"t","truncated":true}"#
        )
    }

    @Test("UTF-8 payloads are cut at a character boundary")
    func truncatedAtBoundary() {
        let text = "a" + String(repeating: "é", count: 40_000)
        let letter = DeadLetter(reason: "big", topic: "t", payload: Array(text.utf8), receivedAt: received)
        #expect(letter.payload.count == 65_535)
        #expect(letter.size == 80_001)
        let kept = "a" + String(repeating: "é", count: 32_767)
        #expect(
            json(letter)
                == #"{"payload":"\#(kept)","reason":"big","received_at":"2026-11-22T10:41:05.123Z","size":80001,"topic":"t","truncated":true}"#
        )
    }

    @Test("binary payloads are truncated and base64-encoded")
    func truncatedBinary() {
        let letter = DeadLetter(
            reason: "invalid_utf8", topic: "t", payload: Array(repeating: 0xFF, count: 70_000), receivedAt: received)
        #expect(letter.payload.count == 65_536)
        let base64 = Data(Array(repeating: UInt8(0xFF), count: 65_536)).base64EncodedString()
        #expect(
            json(letter)
                == #"{"payload_base64":"\#(base64)","reason":"invalid_utf8","received_at":"2026-11-22T10:41:05.123Z","size":70000,"topic":"t","truncated":true}"#
        )
    }
}
