import Foundation
import GRDB
import GRDBSQLite
import Testing
@testable import TrellisStore
@testable import TrellisStoreSQLite
import TrellisTestSupport

/// What a relay would have acknowledged: the changes whose positions are committed.
struct Ledger {
    var positions: [UInt64] = []

    mutating func queued(in store: SQLiteStore) { positions.append(store.queuedPosition) }

    /// Records a dead letter `line <index>` of `payload` at `instant(index)` for each of `indices`,
    /// noting each change as queued: the load that fills a store.
    mutating func queueLines(_ indices: Range<Int>, of payload: [UInt8], in store: SQLiteStore) async throws {
        for index in indices {
            try await store.recordDeadLetter(
                reason: "line \(index)", topic: "t", payload: payload, at: instant(Double(index)))
            queued(in: store)
        }
    }

    func acknowledged(by store: SQLiteStore) -> Int {
        positions.filter { store.isCommitted(through: $0) }.count
    }
}

/// A full database, a write lock held by another connection, a full or read-only file system:
/// every change queued behind is kept and committed once the store can write again, nothing is
/// acknowledged before its commit, and the failure is loud once.
@Suite("Store exhaustion")
struct StoreExhaustionTests {
    static let line = [UInt8](repeating: 0x61, count: 60_000)

    @Test("a full database (max_page_count): nothing acknowledged is lost, one error per kind, recovery logged once")
    func fullDatabase() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let log = CapturedLog()
        let store = try SQLiteStore(directory: directory.path, logger: log.logger, patience: .milliseconds(200))
        var ledger = Ledger()
        try await ledger.queueLines(0..<5, of: Self.line, in: store)
        try await store.flush()
        try await store.writer.writeWithoutTransaction { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count")!
            try db.execute(sql: "PRAGMA max_page_count = \(pages)")
        }

        try await ledger.queueLines(5..<40, of: Self.line, in: store)
        try await eventually("two commits failed") { store.health.failedCommits >= 2 }
        let failing = await store.writeStatus()
        #expect(!failing.writable)
        #expect(failing.error?.hasPrefix("SQLITE_FULL") == true, "\(failing.error ?? "")")
        #expect(failing.unwrittenChanges > 0)
        #expect(failing.oldestUnwrittenChangeSeconds ?? 0 > 0)
        let probe = await #expect(throws: StoreError.self) { try await store.checkWritable() }
        #expect(probe?.kind == "SQLITE_FULL")
        await #expect(throws: StoreError.self) { try await store.flush() }
        let storedWhileFull = try await store.writer.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM dead_letter")!
        }
        let acknowledgedWhileFull = ledger.acknowledged(by: store)
        #expect(
            acknowledgedWhileFull <= storedWhileFull, "acknowledged \(acknowledgedWhileFull), stored \(storedWhileFull)"
        )
        #expect(acknowledgedWhileFull < 40)
        #expect(
            log.count(.error, containing: "SQLITE_FULL") == 1,
            "the first failure of a kind is logged, the retries are not")

        try await store.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = 1073741823")
        }
        #expect(await store.waitUntilCommitted(through: ledger.positions.last!))
        let stored = try await store.deadLetters(limit: 100).count
        #expect(ledger.acknowledged(by: store) == 40)
        #expect(stored == 40)
        let recovered = await store.writeStatus()
        #expect(recovered.writable && recovered.unwrittenChanges == 0)
        try await store.checkWritable()
        try await eventually("the recovery is logged once the commits settled") {
            log.count(.notice, containing: "commits again") >= 1
        }
        #expect(log.count(.notice, containing: "commits again") == 1)
        print(
            "max_page_count: 40 changes queued, \(acknowledgedWhileFull) acknowledged and \(storedWhileFull) stored while full, \(stored) stored after, \(recovered.failedCommits) failed commits"
        )
        try await store.close()
    }

    @Test("a write lock held by another connection: readings wait, then commit, none lost")
    func lockedDatabase() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let log = CapturedLog()
        let store = try SQLiteStore(directory: directory.path, logger: log.logger, patience: .milliseconds(200))
        var other: OpaquePointer?
        #expect(sqlite3_open(directory.path + "/" + SQLiteStore.fileName, &other) == SQLITE_OK)
        #expect(sqlite3_exec(other, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
        var ledger = Ledger()
        for index in 0..<20 {
            try await store.recordReading(
                sensor: "0x\(index + 10)", moisture: 5, temperature: 20, at: instant(Double(index)))
            ledger.queued(in: store)
        }
        try await eventually("a commit failed", timeout: .seconds(60)) { store.health.failedCommits >= 1 }
        let failing = await store.writeStatus()
        #expect(failing.error?.contains("database is locked") == true, "\(failing.error ?? "")")
        #expect(ledger.acknowledged(by: store) == 0)
        #expect(log.count(.error, containing: "SQLITE_BUSY") == 1)

        #expect(sqlite3_exec(other, "COMMIT", nil, nil, nil) == SQLITE_OK)
        sqlite3_close(other)
        #expect(await store.waitUntilCommitted(through: ledger.positions.last!))
        #expect(ledger.acknowledged(by: store) == 20)
        #expect(try await store.counts().sensorReadings == 20)
        #expect(await store.writeStatus().writable)
        try await store.close()
    }

    @Test("closing a store that cannot commit gives the changes up loudly instead of waiting forever")
    func closeWhileFull() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore(
            directory: directory.path, logger: CapturedLog().logger, patience: .milliseconds(200))
        try await store.writer.writeWithoutTransaction { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count")!
            try db.execute(sql: "PRAGMA max_page_count = \(pages)")
        }
        try await store.recordDeadLetter(reason: "big", topic: "t", payload: Self.line, at: instant(0))
        let position = store.queuedPosition
        let error = await #expect(throws: StoreError.self) { try await store.close() }
        #expect(error?.message.contains("could not be committed") == true)
        #expect(!store.isCommitted(through: position))
        #expect(store.uncommittedPosition == position)
        #expect(await store.waitUntilCommitted(through: position) == false)
    }

    @Test(
        "a small tmpfs fills, is remounted larger, then read-only and writable again: every change is stored",
        .enabled(if: Tmpfs.usable, "needs root and mount(8)"))
    func tmpfs() async throws {
        let mount = try Tmpfs(megabytes: 3)
        defer { mount.remove() }
        let log = CapturedLog()
        let store = try SQLiteStore(directory: mount.path, logger: log.logger, patience: .milliseconds(200))
        var ledger = Ledger()
        try await ledger.queueLines(0..<80, of: Self.line, in: store)
        try await eventually("the file system is full") { store.health.failedCommits >= 1 }
        let failing = await store.writeStatus()
        #expect(
            failing.error?.contains("SQLITE_FULL") == true || failing.error?.contains("No space") == true,
            "\(failing.error ?? "")")
        let acknowledgedWhileFull = ledger.acknowledged(by: store)
        #expect(acknowledgedWhileFull < 80)
        try mount.remount("size=64m")
        #expect(await store.waitUntilCommitted(through: ledger.positions.last!))
        #expect(try await store.deadLetters(limit: 200).count == 80)
        print(
            "tmpfs 3 MB: 80 changes of 60 KB queued, \(acknowledgedWhileFull) acknowledged while full, 80 stored after the remount"
        )

        // The first outage is over (logged) before the second begins; else they would be one spell.
        try await eventually("the first recovery is logged") { log.count(.notice, containing: "commits again") == 1 }

        // Remounting read-only is refused while files are open for writing on some kernels.
        if (try? mount.remount("ro")) != nil {
            try await ledger.queueLines(80..<90, of: Self.line, in: store)
            try await eventually("the read-only file system fails a commit") { !(await store.writeStatus().writable) }
            print("read-only tmpfs: \(await store.writeStatus().error ?? "")")
            #expect(ledger.acknowledged(by: store) == 80)
            try mount.remount("rw")
            #expect(await store.waitUntilCommitted(through: ledger.positions.last!))
            #expect(try await store.deadLetters(limit: 200).count == 90)
            try await eventually("the second recovery is logged once the commits settled") {
                log.count(.notice, containing: "commits again") >= 2
            }
            #expect(log.count(.notice, containing: "commits again") == 2)
        } else {
            print("tmpfs: remounting read-only with the store open was refused; that part is skipped")
        }
        try await store.close()
    }
}
