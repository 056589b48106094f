import Foundation
import Testing
import TrellisCore
@testable import TrellisStore
@testable import TrellisStorePostgres
import TrellisTestSupport

/// The spam ledger of every store decides as ``SpamGuard`` does, and on PostgreSQL a burst of
/// admissions sent together, from two relays at once, is counted exactly.
@Suite("Spam ledger")
struct SpamLedgerTests {
    /// One admission of the script: sender, milliseconds after the start, whether it may use an
    /// allowance; or a grant.
    enum Step: Sendable {
        case admit(String, Int, allowance: Bool)
        case grant(String, Int)
    }

    /// Floods past the limit, is kicked then muted, waits out the window, uses a grant, and mixes two senders.
    static let script: [Step] = {
        var steps: [Step] = (0..<8).map { .admit("ann", $0 * 10, allowance: false) }
        steps += (0..<4).map { .admit("bob", 100 + $0, allowance: false) }
        steps += [.admit("ann", 2_000, allowance: false), .grant("ann", 2)]
        steps += (0..<4).map { .admit("ann", 2_010 + $0, allowance: true) }
        steps += [.grant("carl", 5), .admit("carl", 2_100, allowance: true)]
        steps += (0..<7).map { .admit("bob", 2_200 + $0 * 100, allowance: false) }
        return steps
    }()

    /// With `now`, each admission and grant is asked as a ``StoreOperation`` to be answered now first
    /// and awaited only when that gives nothing, as the relay asks: a ledger in memory (SQLite's)
    /// must give the same verdicts either way.
    @Test(
        "a script of floods, windows and grants gets SpamGuard's verdicts", arguments: StoreKind.bothStores,
        [false, true])
    func sameAsSpamGuard(kind: StoreKind, now: Bool) async throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var oracle = SpamGuard(limit: 5, window: 1)
        var expected: [SpamVerdict] = []
        for step in Self.script {
            switch step {
            case let .admit(sender, offset, allowance):
                expected.append(
                    oracle.admit(
                        sender: sender, at: start.addingTimeInterval(Double(offset) / 1000),
                        usingAllowance: allowance))
            case let .grant(sender, count): oracle.grant(sender: sender, count: count)
            }
        }
        #expect(expected.contains(.kicked) && expected.contains(.muted))
        try await withStore(kind) { store in
            var verdicts: [SpamVerdict] = []
            for step in Self.script {
                switch step {
                case let .admit(sender, offset, allowance):
                    let at = start.addingTimeInterval(Double(offset) / 1000)
                    let operation = StoreOperation.admitMessage(
                        sender: sender, at: at, limit: 5, window: 1, usingAllowance: allowance)
                    var answer = now ? store.answerNow(operation) : nil
                    if answer == nil { answer = try await store.answer(operation) }
                    guard case let .verdict(verdict)? = answer else {
                        Issue.record("\(String(describing: answer)) is no verdict"); return
                    }
                    verdicts.append(verdict)
                case let .grant(sender, count):
                    let operation = StoreOperation.grantAllowance(sender: sender, count: count)
                    if !now || store.answerNow(operation) == nil { _ = try await store.answer(operation) }
                }
            }
            #expect(verdicts == expected)
            // Only the shared ledger (PostgreSQL's) must be asked.
            let probe = store.answerNow(
                .admitMessage(sender: "probe", at: start, limit: 5, window: 1, usingAllowance: false))
            #expect((probe == nil) == (kind == .postgres))
        }
    }

    @Test(
        "60 admissions of one sender at once through two relays' stores: 15 allowed, 1 kicked, 44 muted",
        .enabled(if: PostgresTestServer.isRequired))
    func concurrentBurst() async throws {
        try await withTwoRelays { one, two in
            let now = Date()
            let verdicts = try await race(60, one, two) { store, _ in
                try await store.admitMessage(sender: "flood", at: now, limit: 15, window: 60, usingAllowance: false)
            }
            #expect(tally(verdicts) == [.allowed: 15, .kicked: 1, .muted: 44])
        }
    }

    @Test(
        "40 admissions of one sender at once: 10 allowed, 1 kicked, in fewer calls than messages",
        .enabled(if: PostgresTestServer.isRequired))
    func burstInOrder() async throws {
        try await withTwoRelays { one, _ in
            let now = Date()
            let verdicts = try await withThrowingTaskGroup(of: (Int, SpamVerdict).self) { group in
                for index in 0..<40 {
                    group.addTask {
                        (
                            index,
                            try await one.admitMessage(
                                sender: "burst", at: now.addingTimeInterval(Double(index) / 1000),
                                limit: 10, window: 60, usingAllowance: false)
                        )
                    }
                }
                return try await group.reduce(into: [Int: SpamVerdict]()) { $0[$1.0] = $1.1 }
            }
            #expect(tally(verdicts.values) == [.allowed: 10, .kicked: 1, .muted: 29])
            #expect(one.admissions.calls < 40)
        }
    }

    @Test(
        "a sender's row keeps only the times in its window, whatever the limit",
        .enabled(if: PostgresTestServer.isRequired))
    func windowBoundsTheRow() async throws {
        try await withTwoRelays { one, _ in
            let start = Date()
            for index in 0..<300 {
                let verdict = try await one.admitMessage(
                    sender: "steady", at: start.addingTimeInterval(Double(index) / 100),
                    limit: 1_000_000_000, window: 0.05, usingAllowance: false)
                #expect(verdict == .allowed)
            }
            let kept = try await one.client.withConnection { connection in
                try await connection.values(
                    "SELECT cardinality(times) FROM spam_sender WHERE sender = 'steady'",
                    as: Int32.self, logger: one.logger)
            }
            #expect(kept.count == 1 && kept[0] <= 6, "the row keeps \(kept) times")
        }
    }
}
