import Foundation
import Testing
import TrellisTestSupport
@testable import TrellisStore
@testable import TrellisStoreSQLite
import TrellisStorePostgres

/// Backups a running SQLite store writes of itself, their names and their rotation.
@Suite("Backups of a running store")
struct StoreBackingUpTests {
    @Test(
        "names sort as their times, and a rotation keeps the newest backups and leaves other files alone",
        arguments: [
            (
                [
                    "trellis-20261127T010000.000Z.sqlite", "trellis-20261126T010000.000Z.sqlite", "notes.txt",
                    "trellis-20261125T010000.000Z.sqlite"
                ], 2, ["trellis-20261125T010000.000Z.sqlite"]
            ),
            (["trellis-20261127T010000.000Z.sqlite"], 1, []),
            (["trellis-a.sqlite", "trellis-b.sqlite"], 0, ["trellis-a.sqlite"]),
            (["other.sqlite", "trellis-x.sqlite.partial"], 1, [])
        ])
    func rotation(_ names: [String], _ keep: Int, _ expired: [String]) {
        #expect(BackupNaming.expired(names, keep: keep) == expired)
    }

    @Test("requested backups are named apart and rotated apart: neither kind's rotation removes the other's")
    func kinds() {
        let time = Date(timeIntervalSince1970: 1_795_744_200.5)
        #expect(BackupNaming.name(at: time, kind: .requested) == "trellis-requested-20261127T015000.500Z.sqlite")
        #expect(BackupNaming.kind(of: BackupNaming.name(at: time)) == .scheduled)
        #expect(BackupNaming.kind(of: BackupNaming.name(at: time, kind: .requested)) == .requested)
        #expect(BackupNaming.kind(of: "notes.txt") == nil)
        let scheduled = (1...3).map { BackupNaming.name(at: time.addingTimeInterval(Double($0))) }
        let requested = (1...3).map { BackupNaming.name(at: time.addingTimeInterval(Double($0)), kind: .requested) }
        #expect(BackupNaming.expired(scheduled + requested, keep: 1, kind: .requested) == Array(requested.prefix(2)))
        #expect(BackupNaming.expired(scheduled + requested, keep: 3) == [])
        #expect(BackupNaming.expired(requested + scheduled, keep: 2, kind: .scheduled) == [scheduled[0]])
    }

    @Test("a backup's name carries its UTC time to the millisecond")
    func naming() {
        let time = Date(timeIntervalSince1970: 1_795_744_200.5)
        #expect(BackupNaming.name(at: time) == "trellis-20261127T015000.500Z.sqlite")
        #expect(BackupNaming.timestamp(time) == "2026-11-27T01:50:00.500Z")
        #expect(BackupNaming.name(at: time) < BackupNaming.name(at: time.addingTimeInterval(0.001)))
    }

    @Test(
        "an SQLite store backs itself up into a directory, each copy whole and equal to the state, keeping the newest")
    func sqliteBacksUp() async throws {
        let state = TemporaryDirectory(), backups = TemporaryDirectory()
        defer { state.remove(); backups.remove() }
        let store = try SQLiteStore(directory: state.path)
        _ = try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 7)
        try await store.recordReading(sensor: "0x36", moisture: 6, temperature: 21.5, at: instant(1))
        var written: [BackupFile] = []
        for second in 0..<3 {
            written.append(try await store.backup(into: backups.path, keep: 2, at: instant(Double(second))))
        }
        let kept = try FileManager.default.contentsOfDirectory(atPath: backups.path).sorted()
        #expect(kept == written.suffix(2).map(\.name))
        let live = try await store.exportState()
        try await store.close()
        // The newest copy, restored into a state of its own, holds what the store held.
        let restored = TemporaryDirectory()
        defer { restored.remove() }
        try FileManager.default.createDirectory(atPath: restored.path, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: try #require(written.last).path,
            toPath: (restored.path as NSString).appendingPathComponent(SQLiteStore.fileName))
        let copy = try SQLiteStore(directory: restored.path)
        #expect(try await copy.exportState() == live)
        try await copy.close()
        #expect(try SQLiteBackup.check(try #require(written.last).path).bytes == written.last?.bytes)
    }

    @Test("a PostgreSQL store takes no backup of its own", .enabled(if: PostgresTestServer.isRequired))
    func postgresDoesNot() async throws {
        try await withStore(.postgres) { store in
            #expect(!(store is any StoreBackingUp))
        }
    }
}
