import Foundation
import GRDB
import Testing
import TrellisTestSupport
import TrellisCore
@testable import TrellisStore
@testable import TrellisStoreSQLite
import TrellisStorePostgres

/// The dead letters a store keeps, on every store: recorded and trimmed to the cap, and read back by
/// `deadLetters(matching:)`, the operators' read, by reason, topic prefix and time.
@Suite("Dead letters kept, trimmed, and read back by reason, topic prefix and time")
struct DeadLetterQueryTests {
    /// Six letters, one a second from `instant(1)`, oldest first.
    static let letters: [(reason: String, topic: String)] = [
        ("invalid_op", "rpi/torpi"),
        ("unknown_topic", "rpi/x"),
        ("invalid_op", "rpi/torpi/alice"),
        ("invalid_json", "devices/node7/log"),
        ("invalid_op", "rpiz/torpi"),
        ("unknown_topic", "devices/node70/log")
    ]

    static let cases: [(query: DeadLetterQuery, topics: [String])] = [
        (DeadLetterQuery(limit: 10), letters.reversed().map(\.topic)),
        (DeadLetterQuery(reason: "invalid_op", limit: 10), ["rpiz/torpi", "rpi/torpi/alice", "rpi/torpi"]),
        (DeadLetterQuery(topicPrefix: "rpi/", limit: 10), ["rpi/torpi/alice", "rpi/x", "rpi/torpi"]),
        (DeadLetterQuery(topicPrefix: "devices/node7/", limit: 10), ["devices/node7/log"]),
        (DeadLetterQuery(topicPrefix: "devices/node7", limit: 10), ["devices/node70/log", "devices/node7/log"]),
        (DeadLetterQuery(reason: "invalid_op", topicPrefix: "rpi/torpi", limit: 10), ["rpi/torpi/alice", "rpi/torpi"]),
        (DeadLetterQuery(since: instant(4), limit: 10), ["devices/node70/log", "rpiz/torpi", "devices/node7/log"]),
        (DeadLetterQuery(reason: "unknown_topic", since: instant(2.5), limit: 10), ["devices/node70/log"]),
        (DeadLetterQuery(limit: 2), ["devices/node70/log", "rpiz/torpi"]),
        (DeadLetterQuery(reason: "nothing_like_it", limit: 10), []),
        (DeadLetterQuery(topicPrefix: "\u{10FFFF}", limit: 10), [])
    ]

    @Test("filters apply together, newest first", arguments: StoreKind.allCases)
    func filters(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            for (index, letter) in Self.letters.enumerated() {
                try await store.recordDeadLetter(
                    reason: letter.reason, topic: letter.topic, payload: Array("p\(index)".utf8),
                    at: instant(Double(index + 1)))
            }
            for (query, topics) in Self.cases {
                let found = try await store.deadLetters(matching: query)
                #expect(found.map(\.topic) == topics, "\(query)")
            }
            let newest = try await store.deadLetters(matching: DeadLetterQuery(limit: 1))
            #expect(newest.first?.payload == Array("p5".utf8))
            #expect(newest.first?.receivedAt == instant(6))
        }
    }

    @Test("pages follow one another by id, unmoved by letters recorded meanwhile", arguments: StoreKind.allCases)
    func pages(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            for index in 0..<7 {
                try await store.recordDeadLetter(
                    reason: index.isMultiple(of: 2) ? "even" : "odd", topic: "t/\(index)",
                    payload: [], at: instant(Double(index)))
            }
            var seen: [String] = []
            var before: Int64?
            var pages = 0
            repeat {
                let page = try await store.deadLetters(
                    matching: DeadLetterQuery(reason: "even", before: before, limit: 2))
                seen += page.map(\.topic)
                before = page.count == 2 ? page.last?.id : nil
                pages += 1
                // A letter recorded between two pages comes before the first page, never into a later one.
                try await store.recordDeadLetter(reason: "even", topic: "late/\(pages)", payload: [], at: instant(100))
            } while before != nil
            #expect(seen == ["t/6", "t/4", "t/2", "t/0"])
            #expect(pages == 3)
        }
    }

    @Test("SQLite answers a reason or a topic prefix through an index, never scanning the table")
    func sqliteIndexes() async throws {
        try await withSQLiteStore(.inMemory) { store async throws in
            let plans = try await store.writer.read { db in
                try [
                    ("reason = ?", ["invalid_op"]),
                    ("topic >= ? AND topic < ?", ["rpi/", "rpi0"])
                ].map { condition, arguments -> String in
                    try Row.fetchAll(
                        db,
                        sql:
                            "EXPLAIN QUERY PLAN SELECT id FROM dead_letter WHERE \(condition) ORDER BY id DESC LIMIT 20",
                        arguments: StatementArguments(arguments)
                    ).map { $0["detail"] as String }.joined(separator: "; ")
                }
            }
            #expect(plans[0].contains("dead_letter_by_reason"), "\(plans[0])")
            #expect(plans[1].contains("dead_letter_by_topic"), "\(plans[1])")
            #expect(!plans.joined().contains("SCAN dead_letter "), "\(plans)")
        }
    }

    @Test(
        "SQLite trims dead letters without reading a payload, and counts them only when their ids span more than the cap"
    )
    func sqliteTrimPlan() async throws {
        try await withSQLiteStore(.inMemory) { store async throws in
            let (span, trim) = try await store.writer.read { db in
                let plan = { (sql: String, arguments: StatementArguments) in
                    try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map {
                        $0["detail"] as String
                    }
                }
                return (
                    try plan(BufferedWrite.deadLetterSpanSQL, []), try plan(BufferedWrite.trimDeadLettersSQL, [10_000])
                )
            }
            // The span: both ends of the key, nothing walked.
            #expect(!span.contains { $0.hasPrefix("SCAN dead_letter") }, "\(span)")
            // The trim: a rowid range; the count on an index; the oldest walked by rowid up to the first kept.
            #expect(trim.contains("SEARCH dead_letter USING INTEGER PRIMARY KEY (rowid<?)"), "\(trim)")
            #expect(trim.contains { $0.hasPrefix("SCAN dead_letter USING COVERING INDEX") }, "\(trim)")
        }
    }

    @Test(
        "letters with gaps in their ids (a client's trimmed) are trimmed by count to the cap, newest kept",
        arguments: StoreKind.allCases)
    func trimByCount(_ kind: StoreKind) async throws {
        try await withStore(kind, deadLetterLimit: 10) { store async throws in
            for index in 0..<30 {
                try await store.recordDeadLetter(
                    reason: "a\(index)", topic: "t", payload: [], at: instant(0), client: "a", quota: 2)
                try await store.recordDeadLetter(reason: "n\(index)", topic: "t", payload: [], at: instant(0))
            }
            let kept = try await store.deadLetters(limit: 100).map(\.reason)
            #expect(kept.count == 10)
            #expect(kept == ["n29", "a29", "n28", "a28", "n27", "n26", "n25", "n24", "n23", "n22"])
        }
    }

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
