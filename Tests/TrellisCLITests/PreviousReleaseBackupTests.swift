import Foundation
import Testing
import TrellisStore
import TrellisStoreSQLite
import TrellisTestSupport
import TrellisApplication

/// A backup written by the previous release restores with this one. `Fixtures/release-0.1.0.backup.sqlite`
/// was taken by Trellis 0.1.0's own `trellis store backup` of a running relay (its schema: the migrations
/// `v1`, `catalog`, `devices`, `deliveries`, `probe`); `Fixtures/make-release-backup.sh` says how, from the
/// release's binary. This release restores it (`StateBackup`, which `trellis store restore` runs), migrates it
/// on open, and the relay's engine answers from it.
@Suite("A backup of the previous release")
struct PreviousReleaseBackupTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/release-0.1.0.backup.sqlite").path

    @Test("restores, is migrated to this release's schema with every row kept, and the relay's engine answers from it")
    func restoresAndServes() async throws {
        let file = temporaryDirectory() + "-0.1.0.sqlite"
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: file)
        let state = temporaryDirectory()
        let restored = try await StateBackup.restore(file, into: .sqlite(directory: state))
        #expect(
            restored.summary.migrations.joined(separator: ", ") == "catalog, deliveries, devices, probe, v1",
            "\(restored.summary.migrations)")

        let store = try SQLiteStore(directory: state)
        #expect(try await store.plants().map(\.name) == ["Fern", "Ivy"])
        let door = try #require(try await store.button(id: "door"))
        #expect(door.total == 3 && door.history.count == 3)
        #expect(try await store.client(id: "phone") != nil)
        #expect(try await store.deadLetters(limit: 10).map(\.reason) == ["ERR_missingVals"])
        #expect(try await store.likes(client: "phone").map(\.symbol) == ["NEEX"])
        #expect(try await store.speciesCount() == 95)
        #expect(try await store.device(id: "pump-1") != nil)
        #expect(try await store.deviceLog(device: "pump-1", since: nil, limit: 10).contains { $0.message == "booted" })
        let dump = try await store.exportState()
        #expect(dump.rowCounts.first { $0.table == "catalog_plant_link" }?.rows == 1)

        // The relay's engine on the migrated state: the phone was online for the presses (none missed);
        // the history is the release's. (`StoreBackupTests` serves a restored state from the binary.)
        let engine = EngineHarness(store: store)
        let published = await engine.send("door", on: "p2o/clients/phone/register")
        let registered = published.first { $0.topic == "p2o/clients/phone/register-response" }
        #expect(
            registered?.text?.hasPrefix(#"{"button":{"count":0,"history":["2026-11-27T03:13:39.810Z","#) == true,
            "\(published.map { "\($0.topic) \($0.text ?? "")" })")
        try await store.close()

        // Opened by this release, the state took its later migrations; a backup of it now carries them.
        let backup = try await StateBackup.backup(
            .sqlite(directory: state), to: temporaryDirectory() + "-now.sqlite", force: false)
        #expect(backup.migrations.contains("dead-letter-index"), "the later migration: \(backup.migrations)")
    }
}
