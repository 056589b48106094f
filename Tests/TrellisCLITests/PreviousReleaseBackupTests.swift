import Foundation
import Testing
import TrellisStore
import TrellisStoreSQLite
import TrellisTestSupport

/// A backup written by the previous release restores with this one. `Fixtures/release-0.1.0.backup.sqlite`
/// was taken by Trellis 0.1.0's own `trellis store backup` of a running relay (its schema: the migrations
/// `v1`, `catalog`, `devices`, `deliveries`, `probe`); `Fixtures/make-release-backup.sh` says how, from the
/// release's binary. This release restores it, migrates it on open, and serves it.
@Suite("A backup of the previous release")
struct PreviousReleaseBackupTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/release-0.1.0.backup.sqlite").path

    @Test("restores, is migrated to this release's schema with every row kept, and a relay answers from it")
    func restoresAndServes() async throws {
        let file = temporaryDirectory() + "-0.1.0.sqlite"
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: file)
        let state = temporaryDirectory()
        let restored = try await TrellisBinary.run(["store", "restore", file, "--state", state])
        #expect(restored.status == 0, "\(restored.output)")
        #expect(restored.output.contains("(schema catalog, deliveries, devices, probe, v1)"), "\(restored.output)")

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
        try await store.close()

        // Opened by this release, the state took its later migrations; a backup of it now carries them.
        let again = temporaryDirectory() + "-now.sqlite"
        let backup = try await TrellisBinary.run(["store", "backup", again, "--state", state])
        #expect(backup.status == 0, "\(backup.output)")
        #expect(backup.output.contains("dead-letter-index"), "the later migration: \(backup.output)")
        #expect(dump.rowCounts.first { $0.table == "catalog_plant_link" }?.rows == 1)

        try await withTestBroker { broker in
            let relay = try TrellisBinary.start(["run", "--broker", broker.address, "--state", state])
            try await relay.waitForOutput("connected to the broker")
            let (phone, seen) = try await TestClients.connectCollecting(
                to: broker, id: "phone", "p2o/clients/phone/register-response")
            try await phone.publishAndWait(topic: "p2o/clients/phone/register", payload: Array("door".utf8))
            let registered = try await seen.messages(on: "p2o/clients/phone/register-response")
            // The phone was online for the presses (none missed); the history is the release's.
            #expect(
                registered[0].text?.hasPrefix(#"{"button":{"count":0,"history":["2026-11-27T03:13:39.810Z","#) == true,
                "\(registered[0].text ?? "")")
            #expect(try await relay.terminate() == 0)
            await phone.shutdown()
        }
    }
}
