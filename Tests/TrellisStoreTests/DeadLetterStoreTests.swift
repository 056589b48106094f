import Foundation
import Testing
import TrellisCore
import TrellisTestSupport
@testable import TrellisStore

@Suite("DeadLetterStore")
struct DeadLetterStoreTests {
    @Test("dead letters come back newest first with payloads intact", arguments: StoreKind.allCases)
    func roundTrip(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            try await store.recordDeadLetter(
                reason: "invalid_op", topic: "rpi/torpi", payload: Array("hi".utf8), at: instant(1.001))
            try await store.recordDeadLetter(reason: "empty", topic: "rpi/torpi", payload: [], at: instant(2))
            try await store.recordDeadLetter(
                reason: "invalid_utf8", topic: "rpi/sensors/0x36", payload: [0xFF, 0x00, 0x41], at: instant(3))
            let letters = try await store.deadLetters(limit: 10)
            #expect(letters.map(\.reason) == ["invalid_utf8", "empty", "invalid_op"])
            #expect(letters.map(\.payload) == [[0xFF, 0x00, 0x41], [], Array("hi".utf8)])
            #expect(letters.map(\.topic) == ["rpi/sensors/0x36", "rpi/torpi", "rpi/torpi"])
            #expect(letters.map(\.receivedAt) == [instant(3), instant(2), instant(1.001)])
            #expect(letters[0].id > letters[1].id)
            #expect(try await store.deadLetters(limit: 2).map(\.reason) == ["invalid_utf8", "empty"])
            #expect(try await store.deadLetters(limit: 0).isEmpty)
        }
    }

    @Test(
        "only the newest letters up to the cap are kept",
        arguments: StoreKind.allCases, [(5, 12), (300, 1_000), (1, 3)])
    func trim(_ kind: StoreKind, sizes: (limit: Int, written: Int)) async throws {
        let (limit, written) = sizes
        try await withStore(kind, deadLetterLimit: limit) { store async throws in
            for index in 0..<written {
                try await store.recordDeadLetter(
                    reason: "r\(index)", topic: "t", payload: [UInt8(index % 256)], at: instant(Double(index)))
            }
            let letters = try await store.deadLetters(limit: written)
            #expect(letters.count == limit)
            #expect(letters.first?.reason == "r\(written - 1)")
            #expect(letters.last?.reason == "r\(written - limit)")
            #expect(try await store.counts().deadLetters == limit)
        }
    }

    @Test("the default cap keeps 10,000 letters")
    func defaultCap() async throws {
        try await withStore(.inMemory) { store async throws in
            for index in 0..<10_050 {
                try await store.recordDeadLetter(reason: "r\(index)", topic: "t", payload: [], at: instant(0))
            }
            #expect(try await store.counts().deadLetters == 10_000)
            #expect(try await store.deadLetters(limit: 1).first?.reason == "r10049")
        }
    }
}
