import Foundation
import Testing
import TrellisCore
@testable import TrellisStore
@testable import TrellisStorePostgres
import TrellisTestSupport

/// How `PostgresAdmissions` hands a burst to `trellis_admit_batch`: grouped by sender in one order
/// every relay uses, with each verdict going back to the message that asked for it; and how the
/// function keeps a sender's times sorted, which lets it cut the expired ones off as a prefix.
@Suite("PostgreSQL spam admissions in batches")
struct AdmissionBatchTests {
    static func admission(_ sender: String) -> PostgresAdmissions.Admission {
        PostgresAdmissions.Admission(sender: sender, at: 0, limit: 1, window: 1, usingAllowance: false)
    }

    @Test(
        "grouped by sender in UTF-8 byte order, each sender's in the order asked",
        arguments: [
            ([], []),
            (["a"], [0]),
            (["b", "b", "b"], [0, 1, 2]),
            (["b", "a", "b", "a"], [1, 3, 0, 2]),
            (["sensor-2", "Sensor-1", "sensor-1"], [1, 2, 0]),
            // Precomposed and decomposed "é" are equal as Swift strings but two senders to PostgreSQL.
            (["e\u{301}", "\u{E9}", "e\u{301}"], [0, 2, 1])
        ] as [([String], [Int])])
    func grouping(senders: [String], expected: [Int]) {
        #expect(PostgresAdmissions.groupedBySender(senders.map(Self.admission)) == expected)
    }

    @Test(
        "three senders interleaved, admitted at once through two relays: each one's limit holds",
        .enabled(if: PostgresTestServer.isRequired))
    func interleavedSenders() async throws {
        try await withTwoRelays { one, two in
            let now = Date()
            let senders = ["ann", "bob", "carl"]
            let verdicts = try await race(15, one, two) { store, index in
                let sender = senders[index % 3]
                return (
                    sender,
                    try await store.admitMessage(sender: sender, at: now, limit: 3, window: 60, usingAllowance: false)
                )
            }
            for sender in senders {
                let own = verdicts.filter { $0.0 == sender }.map(\.1)
                #expect(tally(own) == [.allowed: 3, .kicked: 1, .muted: 1], "\(sender): \(own)")
            }
        }
    }

    @Test(
        "a time older than the newest kept takes its place: the row stays sorted and the window is cut by time",
        .enabled(if: PostgresTestServer.isRequired))
    func outOfOrderTimes() async throws {
        try await withTwoRelays { one, two in
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            for (store, offset) in [(one, 50), (two, 10), (one, 30), (two, 40)] {
                let verdict = try await store.admitMessage(
                    sender: "late", at: start.addingTimeInterval(Double(offset) / 1000),
                    limit: 10, window: 1, usingAllowance: false)
                #expect(verdict == .allowed)
            }
            let base = Int64(start.timeIntervalSince1970 * 1000)
            #expect(try await times(of: "late", in: one) == [10, 30, 40, 50].map { base + $0 })
            // 1,035 ms after the start, the window (1 s) holds the times after 35 ms.
            _ = try await one.admitMessage(
                sender: "late", at: start.addingTimeInterval(1.035), limit: 10, window: 1,
                usingAllowance: false)
            #expect(try await times(of: "late", in: two) == [40, 50, 1_035].map { base + $0 })
        }
    }

    @Test(
        "the lean-admissions migration sorts the times of the rows it finds, so their expired times are a prefix",
        .enabled(if: PostgresTestServer.isRequired))
    func migrationSortsRows() async throws {
        try await PostgresTestServer.withDatabase { url in
            // A row as the `batching` function could leave it (a time appended out of order), and the
            // migration marked as not yet applied, so the next start runs it.
            let before = try await PostgresStore.connect(url, owner: "relay-1")
            try await before.client.withConnection { connection in
                try await connection.query(
                    "INSERT INTO spam_sender (sender, times, kicked, allowance) VALUES ('legacy', '{50,10,30}', false, 0)",
                    logger: before.logger)
                try await connection.query(
                    "DELETE FROM trellis_migration WHERE name = 'lean-admissions'", logger: before.logger)
            }
            try await before.close()
            let after = try await PostgresStore.connect(url, owner: "relay-1")
            #expect(try await times(of: "legacy", in: after) == [10, 30, 50])
            // 1,040 ms after 0 with a window of 1 s: the times up to 40 are cut off, wherever they were stored.
            let verdict = try await after.admitMessage(
                sender: "legacy", at: Date(timeIntervalSince1970: 1.040), limit: 10, window: 1,
                usingAllowance: false)
            #expect(verdict == .allowed)
            #expect(try await times(of: "legacy", in: after) == [50, 1_040])
            try await after.close()
        }
    }

    /// The times the sender's row keeps, as stored.
    private func times(of sender: String, in store: PostgresStore) async throws -> [Int64] {
        try await store.client.withConnection { connection in
            try await connection.values(
                "SELECT times FROM spam_sender WHERE sender = \(sender)", as: [Int64].self,
                logger: store.logger
            ).first ?? []
        }
    }
}
