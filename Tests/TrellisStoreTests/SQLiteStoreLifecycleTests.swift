import Foundation
import GRDB
import Testing
import TrellisCore
import TrellisTestSupport
@testable import TrellisStore
@testable import TrellisStoreSQLite

@Suite("SQLiteStore lifecycle")
struct SQLiteStoreLifecycleTests {
    @Test("state survives closing and reopening the same directory")
    func reopen() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }

        let first = try SQLiteStore(directory: directory.path)
        #expect(try await first.addPlant(name: "Fern", sensors: ["0x36", "0x10"], maxPlants: 5).plantID != nil)
        try await first.recordReading(sensor: "0x36", moisture: 6, temperature: 23.5, at: instant(1))
        _ = try await first.register(client: "c1", button: "b1", at: instant(1))
        try await first.setClientStatus(client: "c1", online: false, at: instant(2))
        _ = try await first.recordPress(button: "b1", at: instant(3), historyLimit: 20)
        _ = try await first.recordPress(button: "b1", at: instant(4), historyLimit: 20)
        try await first.recordDeadLetter(reason: "empty", topic: "rpi/torpi", payload: [], at: instant(5))
        let plantsBefore = try await first.plants()
        try await first.close()
        try await first.close()

        #expect(FileManager.default.fileExists(atPath: directory.path + "/trellis.sqlite"))
        let second = try SQLiteStore(directory: directory.path)
        #expect(try await second.plants() == plantsBefore)
        #expect(
            try await second.sensorRecords(plant: "Fern") == [
                PlantSensorRecord(plant: "Fern", sensor: "0x36", moisture: 6, temperature: 23.5, at: instant(1)),
                PlantSensorRecord(plant: "Fern", sensor: "0x10")
            ])
        #expect(try await second.button(id: "b1") == ButtonState(id: "b1", total: 2, history: [instant(3), instant(4)]))
        #expect(
            try await second.client(id: "c1")
                == ClientRecord(id: "c1", online: false, registrations: [.init(button: "b1", missed: 2)]))
        #expect(try await second.deadLetters(limit: 5).map(\.reason) == ["empty"])
        #expect(
            try await second.counts()
                == StoreCounts(
                    plants: 1, sensors: 2, sensorReadings: 1, buttons: 1, clients: 1, registrations: 1, deadLetters: 1))
        try await second.close()
    }

    @Test("a file store runs in WAL mode with synchronous NORMAL and foreign keys on")
    func pragmas() async throws {
        try await withSQLiteStore(.directory) { store async throws in
            let settings = try await store.writer.read { db in
                (
                    try String.fetchOne(db, sql: "PRAGMA journal_mode"),
                    try Int.fetchOne(db, sql: "PRAGMA synchronous"),
                    try Bool.fetchOne(db, sql: "PRAGMA foreign_keys")
                )
            }
            #expect(settings.0 == "wal")
            #expect(settings.1 == 1)
            #expect(settings.2 == true)
        }
    }

    @Test("a directory that cannot be created gives an error naming the path")
    func uncreatableDirectory() throws {
        let parent = TemporaryDirectory()
        defer { parent.remove() }
        try FileManager.default.createDirectory(atPath: parent.path, withIntermediateDirectories: true)
        let blocker = parent.path + "/not-a-directory"
        #expect(FileManager.default.createFile(atPath: blocker, contents: Data("x".utf8)))
        let target = blocker + "/state"

        let error = #expect(throws: StoreError.self) { try SQLiteStore(directory: target) }
        #expect(error?.code == .cannotOpen)
        #expect(error?.message == "cannot create the store directory at \(target)")
        #expect(error?.underlying != nil)
        #expect(error?.description.hasPrefix("cannot create the store directory at \(target): ") == true)
    }

    @Test("a file that is not a database gives an error naming the file")
    func notADatabase() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let path = directory.path + "/trellis.sqlite"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x41, count: 4096)))

        let error = #expect(throws: StoreError.self) { try SQLiteStore(directory: directory.path) }
        #expect(error?.code == .cannotOpen)
        #expect(error?.message.hasSuffix("at \(path)") == true)
        #expect(error?.sqliteResultCode == 26)
    }

    @Test("operations after close throw a closed error", arguments: StoreKind.allCases)
    func useAfterClose(_ kind: StoreKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = kind == .inMemory ? try SQLiteStore.inMemory() : try SQLiteStore(directory: directory.path)
        try await store.close()
        await #expect(throws: StoreError.self) { try await store.plants() }
        let error = await #expect(throws: StoreError.self) {
            try await store.recordReading(sensor: "0x36", moisture: 1, temperature: 1, at: instant(0))
        }
        #expect(error?.code == .closed)
        #expect(error?.message == "recordReading(sensor: 0x36) called on a closed store")
    }

    @Test("database failures are wrapped with the operation that failed")
    func wrappedFailure() async throws {
        try await withSQLiteStore(.inMemory) { store async throws in
            try await store.writer.write { db in try db.execute(sql: "DROP TABLE button_press") }
            let error = await #expect(throws: StoreError.self) {
                try await store.recordPress(button: "b1", at: instant(0), historyLimit: 20)
            }
            #expect(error?.code == .operationFailed)
            #expect(error?.message == "recordPress(button: b1) failed")
            #expect(error?.underlying is DatabaseError)
            #expect(error?.description.contains("no such table: button_press") == true)
            #expect(try await store.button(id: "b1") == nil, "the failed press must roll back entirely")
        }
    }

    @Test("a batch that cannot commit is kept: flush gives up after the patience, the batch commits once it can")
    func batchFailure() async throws {
        let store = try SQLiteStore.inMemory(patience: .milliseconds(300))
        try await store.writer.write { db in try db.execute(sql: "ALTER TABLE dead_letter RENAME TO dead_letter_away") }
        try await store.recordDeadLetter(reason: "r", topic: "t", payload: [], at: instant(0))
        let error = await #expect(throws: StoreError.self) { try await store.flush() }
        #expect(error?.message == "writing 1 buffered rows failed")
        #expect(error?.kind == "SQLITE_ERROR")
        let failing = await store.writeStatus()
        #expect(!failing.writable)
        #expect(failing.failedCommits >= 1)
        #expect(failing.unwrittenChanges == 1)
        try await store.writer.write { db in try db.execute(sql: "ALTER TABLE dead_letter_away RENAME TO dead_letter") }
        // The retry commits it, however long the backoff has grown meanwhile.
        #expect(await store.waitUntilCommitted(through: store.queuedPosition))
        #expect(store.uncommittedPosition == nil)
        #expect(try await store.deadLetters(limit: 5).map(\.reason) == ["r"])
        #expect(await store.writeStatus().writable)
        try await store.close()
    }

    @Test("times are stored as integer milliseconds since 1970")
    func millisecondStorage() async throws {
        try await withSQLiteStore(.inMemory) { store async throws in
            _ = try await store.recordPress(
                button: "b1", at: Date(timeIntervalSince1970: 1_795_344_065.123), historyLimit: 20)
            let stored = try await store.writer.read { db in
                let row = try Row.fetchOne(db, sql: "SELECT at, typeof(at) AS type FROM button_press")
                return (row?["at"] as Int64?, row?["type"] as String?)
            }
            #expect(stored.0 == 1_795_344_065_123)
            #expect(stored.1 == "integer")
        }
    }
}
