import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisStoreSQLite
import TrellisTestSupport

/// Backups of a running relay's SQLite state through a real broker: asked for by an operator on
/// `trellis/request/store/backup`, and taken on a schedule with rotation.
@Suite("Backups: asked for over MQTT and on a schedule", .serialized)
struct BackupRequestTests {
    @Test("an operator's request is answered with the file, which holds the state; others are refused")
    func requested() async throws {
        let backups = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: backups) }
        var settings = RelaySettings()
        settings.operators = ["ops"]
        settings.backupDirectory = backups
        settings.backupInterval = 0
        try await withRelay(settings: settings) { relay in
            let console = try await FleetConsole.open(relay)
            #expect(try await console.request("devices", "list", "{}").contains(#""status":"ok""#))
            try await console.client.publishAndWait(topic: "devices/node7/status", payload: Array("online".utf8))
            _ = try await console.inbox.messages(on: "devices/node7/info", count: 1, timeout: .seconds(20))

            let reply = try await console.request("store", "backup", "{}")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any], "\(reply)")
            let data = try #require(object["data"] as? [String: Any], "\(reply)")
            let file = try #require(data["file"] as? String)
            #expect(file.hasPrefix("trellis-") && file.hasSuffix(".sqlite"))
            #expect((data["bytes"] as? Int ?? 0) > 0)
            #expect((data["taken_at"] as? String).flatMap(ISO8601Time.parse) != nil, "\(reply)")
            let path = (backups as NSString).appendingPathComponent(file)
            #expect(try SQLiteBackup.check(path).bytes == data["bytes"] as? Int)

            // Restored into a state of its own, the copy holds what the relay's state holds.
            let store = try relay.store
            try await store.flush()
            let live = try await store.exportState()
            let restored = temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: restored) }
            try FileManager.default.createDirectory(atPath: restored, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: path, toPath: (restored as NSString).appendingPathComponent(SQLiteStore.fileName))
            let copy = try SQLiteStore(directory: restored)
            #expect(try await copy.exportState() == live)
            try await copy.close()

            #expect(try await console.errorCode("store", "backup", "{}", client: "alice") == "forbidden")
            #expect(try await console.errorCode("store", "backup", #"{"to":"/tmp"}"#) == "invalid_request")
            #expect(try await console.request("store", "backup", "{}", client: "ops").contains(#""status":"ok""#))
        }
    }

    @Test("scheduled backups rotate: the newest are kept, the oldest removed")
    func scheduled() async throws {
        let backups = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: backups) }
        var settings = RelaySettings()
        settings.backupDirectory = backups
        settings.backupInterval = 0.2
        settings.backupKeep = 2
        try await withRelay(settings: settings) { _ in
            func files() -> [String] {
                ((try? FileManager.default.contentsOfDirectory(atPath: backups)) ?? []).filter { $0.hasSuffix(".sqlite") }.sorted()
            }
            try await eventually("a first backup is written", timeout: .seconds(30)) { !files().isEmpty }
            let first = files()[0]
            try await eventually("two later backups replaced the first", timeout: .seconds(30)) {
                let now = files()
                return now.count == 2 && !now.contains(first)
            }
            #expect(files().count == 2)
        }
    }
}

/// A fresh path under the temporary directory, not created.
private func temporaryDirectory() -> String {
    (NSTemporaryDirectory() as NSString).appendingPathComponent("trellis-backups-\(UUID().uuidString)")
}
