import Foundation
import GRDB
import Testing
import TrellisMQTT
import TrellisRelay
@testable import TrellisStore
@testable import TrellisStoreSQLite
import TrellisTestSupport

/// A QoS 1 flood of device log lines through a real Mosquitto while the database is full: Trellis
/// acknowledges nothing it has not committed, stops reading (so nothing else is answered either),
/// and once the database has room every line is stored, each once.
@Suite("A full store under a QoS 1 flood")
struct StoreFullRelayTests {
    /// A log line of about 60 KB, numbered.
    static func line(_ index: Int) -> [UInt8] {
        Array(#"{"type":"Device","message":"line \#(index) \#(String(repeating: "x", count: 60_000))"}"#.utf8)
    }

    /// Log lines committed for `device`, read without waiting for what is written behind.
    static func committedLines(_ store: SQLiteStore, device: String) async throws -> Int {
        try await store.writer.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM device_log WHERE device_id = ?", arguments: [device])!
        }
    }

    static func eventually(_ what: String, timeout: Duration = .seconds(60), _ condition: () async throws -> Bool)
        async throws
    {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw TimeoutError(message: "timed out waiting until \(what)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test(
        "100 log lines of 60 KB at QoS 1 while max_page_count is reached: none lost, none twice, nothing answered meanwhile"
    )
    func floodWhileFull() async throws {
        try await withRelay { relay in
            let store = try relay.store
            let sender = try await relay.connect()
            let asker = try await relay.connect(id: "asker")
            let answers = await MessageCollector.collecting(asker)
            try await asker.subscribe("rpi/fromrpi/asker")
            try await sender.publishAndWait(topic: "devices/node1/log", payload: Self.line(0))
            try await Self.eventually("the first line is stored") {
                try await Self.committedLines(store, device: "node1") == 1
            }

            try await store.writer.writeWithoutTransaction { db in
                let pages = try Int.fetchOne(db, sql: "PRAGMA page_count")!
                try db.execute(sql: "PRAGMA max_page_count = \(pages)")
            }
            for index in 1...100 {
                try await sender.publishAndWait(topic: "devices/node1/log", payload: Self.line(index))
            }
            try await Self.eventually("commits fail") { store.health.failedCommits >= 1 }
            let request = "ID:1;sender:asker;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants"
            try await asker.publishAndWait(topic: "rpi/torpi/asker", payload: Array(request.utf8))
            try await Self.eventually("three more commits fail") { store.health.failedCommits >= 4 }
            let status = await store.writeStatus()
            #expect(!status.writable)
            #expect(status.error?.hasPrefix("SQLITE_FULL") == true)
            let storedWhileFull = try await Self.committedLines(store, device: "node1")
            #expect(storedWhileFull < 101)
            #expect(
                await answers.received(on: "rpi/fromrpi/asker").isEmpty,
                "nothing is written while a message waits for its commit, replies included")

            try await store.writer.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA max_page_count = 1073741823")
            }
            // Requests are handled in order: the answer means every line before it was handled.
            try await answers.messages(on: "rpi/fromrpi/asker", timeout: .seconds(120))
            let lines = try await store.deviceLog(device: "node1", since: nil, limit: 500)
            let numbers = lines.map { $0.message.split(separator: " ")[1] }
            #expect(numbers.count == 101)
            #expect(Set(numbers).count == 101, "a line was stored twice")
            #expect(await store.writeStatus().writable)
            print(
                "flood while full: 101 lines sent at QoS 1, \(storedWhileFull) stored while full, \(numbers.count) after recovery, \(status.failedCommits) failed commits"
            )
        }
    }
}
