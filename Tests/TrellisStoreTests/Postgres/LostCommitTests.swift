import Foundation
import PostgresNIO
import Testing
import TrellisCore
import TrellisStore
@testable import TrellisStorePostgres
import TrellisTestSupport

/// A COMMIT whose answer is lost with its connection leaves the store not knowing whether it took effect. Work the
/// store retries — a batch written behind, a handled message's write waiting out an outage — must find out
/// before running again, or what had committed is applied twice. Each test cuts half the COMMITs of a real
/// PostgreSQL server (``CommitCutter``), at random, either after the server got them (it commits) or before (it
/// rolls back), dozens of times, and cuts most of the store's questions about those COMMITs too, so that some are
/// asked again only at the work's next try; then it counts what was stored.
///
/// The draws come from a seed that changes at every run and is printed with a failure; `TRELLIS_TEST_SEED` sets it.
@Suite(
    "PostgreSQL: a COMMIT whose answer is lost", .enabled(if: PostgresTestServer.isRequired),
    .timeLimit(.minutes(2)))
struct LostCommitTests {
    static let seed: UInt64 =
        ProcessInfo.processInfo.environment["TRELLIS_TEST_SEED"].flatMap { UInt64($0) }
        ?? UInt64.random(in: 0 ... .max)

    /// Runs `body` with a store that reaches a fresh database through a cutter, and a store that reaches it
    /// directly, to count with; cutting starts once both are open.
    func withCutStore(
        _ body: (_ cut: PostgresStore, _ direct: PostgresStore, _ cutter: CommitCutter) async throws -> Void
    ) async throws {
        try await PostgresTestServer.withDatabase { url in
            let cutter = try await CommitCutter(to: url.host, port: url.port, seed: Self.seed)
            try await withTearDown(of: cutter, { try? await $0.close() }) { cutter in
                var through = url
                through.host = "127.0.0.1"
                through.port = cutter.port
                let direct = try await PostgresStore.connect(url, owner: "counting")
                try await withTearDown(of: direct, { try? await $0.close() }) { direct in
                    // Patient: a batch may be cut several times in a row before it commits.
                    let store = try await PostgresStore.connect(through, owner: "relay", patience: .seconds(60))
                    try await withTearDown(of: store, { try? await $0.close() }) { store in
                        try await body(store, direct, cutter)
                    }
                }
            }
        }
    }

    @Test("readings written behind are stored once each, whichever way their batches' COMMITs are cut")
    func readingsWrittenBehind() async throws {
        try await withCutStore { store, direct, cutter in
            _ = try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 5)
            let start = Date(timeIntervalSince1970: 1_790_000_000)
            let rounds = 40
            let perRound = 25
            cutter.cut(rate: 0.5, questions: 0.6)
            for round in 0..<rounds {
                for index in 0..<perRound {
                    let minute = Double(round * perRound + index)
                    try await store.recordReading(
                        sensor: "0x36", moisture: index, temperature: 70, at: start.addingTimeInterval(minute * 60))
                }
                try await store.flush()
            }
            cutter.cut(rate: 0)
            let counts = cutter.counts
            #expect(
                counts.delivered >= 3 && counts.lost >= 3 && counts.questionsCut >= 3, "seed \(Self.seed): \(counts)")
            let times = try await Self.column("at", of: "reading_raw", in: direct)
            #expect(times.count == rounds * perRound, "seed \(Self.seed): \(counts)")
            #expect(Set(times).count == rounds * perRound, "seed \(Self.seed): \(counts)")
        }
    }

    @Test("presses of handled messages that wait out the cuts are each counted once, with a delivery mark or without")
    func pressesWaitingOut() async throws {
        try await withCutStore { store, direct, cutter in
            let presses = 60
            cutter.cut(rate: 0.5, questions: 0.6)
            try await OutageWaiting.$enabled.withValue(true) {
                for press in 0..<presses {
                    // Every other press as a QoS 1 message's, whose mark's statement also gives the transaction's id.
                    let mark = press.isMultiple(of: 2) ? DeliveryMark(packetID: press + 1, fingerprint: 7) : nil
                    _ = try await HandledDelivery.$current.withValue(mark) {
                        try await store.recordPress(
                            button: "porch", at: Date(timeIntervalSince1970: 1_790_000_000 + Double(press)),
                            historyLimit: 20)
                    }
                }
            }
            cutter.cut(rate: 0)
            let counts = cutter.counts
            #expect(
                counts.delivered >= 3 && counts.lost >= 3 && counts.questionsCut >= 3, "seed \(Self.seed): \(counts)")
            #expect(try await direct.button(id: "porch")?.total == presses, "seed \(Self.seed): \(counts)")
            #expect(try await store.recentDeliveries(limit: 100).count == presses / 2, "seed \(Self.seed): \(counts)")
        }
    }

    @Test("the server tells a transaction committed, aborted, in progress, or one it never saw")
    func statuses() async throws {
        try await PostgresTestServer.withDatabase { url in
            let logger = PostgresStore.silent
            let close: @Sendable (PostgresConnection) async -> Void = { try? await $0.close() }
            try await withTearDown(of: try await BoundedStatementsTests.connect(url), close) { asking in
                try await withTearDown(of: try await BoundedStatementsTests.connect(url), close) { working in
                    try await working.query("BEGIN", logger: logger)
                    // A transaction that wrote nothing has no id: there is nothing to find out about it.
                    #expect(try await TransactionStatus.currentTransaction(on: working, logger: logger) == nil)
                    try await working.query("ROLLBACK", logger: logger)
                    try await working.query("CREATE TEMPORARY TABLE written (n int)", logger: logger)
                    var seen: [TransactionStatus] = []
                    for end in ["COMMIT", "ROLLBACK", nil] {
                        try await working.query("BEGIN", logger: logger)
                        try await working.query("INSERT INTO written VALUES (1)", logger: logger)
                        let id = try #require(
                            try await TransactionStatus.currentTransaction(on: working, logger: logger))
                        if let end { try await working.query(PostgresQuery(unsafeSQL: end), logger: logger) }
                        seen.append(try await TransactionStatus.of(id, on: asking, logger: logger))
                    }
                    try await working.query("ROLLBACK", logger: logger)
                    seen.append(try await TransactionStatus.of("999999999999", on: asking, logger: logger))
                    #expect(seen == [.committed, .aborted, .inProgress, .forgotten])
                }
            }
        }
    }

    @Test("a server older than PostgreSQL 13 is refused at the start, naming its version")
    func oldServers() throws {
        let url = try PostgresURL("postgres://trellis@127.0.0.1:5432/trellis")
        let twelve = PostgresStore.refusal(ofServerVersion: "120003", at: url)
        #expect(twelve?.message.contains("runs PostgreSQL 12; Trellis needs PostgreSQL 13 or newer") == true)
        #expect(twelve?.code == .cannotOpen)
        #expect(PostgresStore.refusal(ofServerVersion: "90624", at: url)?.message.contains("PostgreSQL 9.6;") == true)
        #expect(PostgresStore.refusal(ofServerVersion: "130000", at: url) == nil)
        #expect(PostgresStore.refusal(ofServerVersion: "150018", at: url) == nil)
    }

    /// The values of one column of a table, as the state's export gives them.
    static func column(_ name: String, of table: String, in store: PostgresStore) async throws -> [String] {
        let dump = try await store.exportState()
        let rows = try #require(dump.tables.first { $0.name == table }, "no table \(table)")
        let index = try #require(rows.columns.firstIndex(of: name), "no column \(name) in \(table)")
        return rows.rows.map { "\($0[index])" }
    }
}
