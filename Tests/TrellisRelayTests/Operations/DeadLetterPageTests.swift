import Foundation
import Testing
import TrellisCore
import TrellisRelay
import TrellisStore

/// `deadletters/list`'s page is cut by the size of its letters as written, so an answer fits the
/// broker's packet limit whatever the payloads.
@Suite("DeadLetterPage")
struct DeadLetterPageTests {
    static func letters(_ count: Int, payload: [UInt8]) -> [StoredDeadLetter] {
        (0..<count).map { index in
            StoredDeadLetter(
                id: Int64(1_000 - index), reason: "r", topic: "t", payload: payload,
                receivedAt: Date(timeIntervalSince1970: 1_795_344_000))
        }
    }

    @Test("64 KiB payloads of control characters (six bytes each escaped) are cut under the bound, with a cursor")
    func cutByBytes() {
        let letters = Self.letters(100, payload: [UInt8](repeating: 0x01, count: DeadLetter.maximumPayloadSize))
        let page = DeadLetterPage(letters, limit: 100, maximumBytes: 1_048_576)
        let bytes = JSONEnvelope.ok(page, transaction: nil).count
        #expect(bytes <= 1_048_576 + 256, "\(bytes)")
        #expect(page.truncated)
        #expect(page.deadLetters.count == 2)
        #expect(page.nextCursor == String(page.deadLetters.last!.id))
        #expect(String(decoding: JSONEnvelope.encode(page), as: UTF8.self).contains(#""truncated":true"#))
    }

    @Test("a page within the bound is cut by count alone; a single letter over the bound still comes, to page on")
    func withinBound() {
        let small = DeadLetterPage(Self.letters(3, payload: Array("hi".utf8)), limit: 20, maximumBytes: 1_048_576)
        #expect(!small.truncated && small.deadLetters.count == 3 && small.nextCursor == nil)
        #expect(!String(decoding: JSONEnvelope.encode(small), as: UTF8.self).contains("truncated"))
        let full = DeadLetterPage(Self.letters(3, payload: Array("hi".utf8)), limit: 3, maximumBytes: 1_048_576)
        #expect(!full.truncated && full.nextCursor == "998")
        let one = DeadLetterPage(
            Self.letters(3, payload: [UInt8](repeating: 0x78, count: 4_096)), limit: 3, maximumBytes: 10)
        #expect(one.truncated && one.deadLetters.count == 1 && one.nextCursor == "1000")
    }
}
