import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisStoreSQLite
import TrellisTestSupport

/// Backups of a relay's SQLite state: asked for by an operator on `trellis/request/store/backup`
/// (on the engine over a state directory), and taken on a schedule with rotation (the backup service
/// beside a relay service that needs no broker for it).
@Suite("Backups: asked for over MQTT and on a schedule")
struct BackupRequestTests {
    @Test("an operator's request is answered with the file, which holds the state; others are refused")
    func requested() async throws {
        let backups = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: backups) }
        var settings = RelaySettings()
        settings.operators = ["ops"]
        settings.backupDirectory = backups
        settings.backupInterval = 0
        settings.backupRequestInterval = 0
        try await withRecorder(.directory, settings: settings) { console async throws in
            #expect(try await console.request("devices", "list", "{}").contains(#""status":"ok""#))
            await console.send("online", on: "devices/node7/status")
            #expect(console.messages(on: "devices/node7/info").count == 1)

            let reply = try await console.request("store", "backup", "{}")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any], "\(reply)")
            let data = try #require(object["data"] as? [String: Any], "\(reply)")
            let file = try #require(data["file"] as? String)
            #expect(file.hasPrefix("trellis-requested-") && file.hasSuffix(".sqlite"))
            #expect((data["bytes"] as? Int ?? 0) > 0)
            #expect((data["taken_at"] as? String).flatMap(ISO8601Time.parse) != nil, "\(reply)")
            let path = (backups as NSString).appendingPathComponent(file)
            #expect(try SQLiteBackup.check(path).bytes == data["bytes"] as? Int)

            // Restored into a state of its own, the copy holds what the relay's state holds.
            let store = try #require(console.store as? SQLiteStore)
            try await store.flush()
            let live = try await store.exportState()
            let restored = temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: restored) }
            try FileManager.default.createDirectory(atPath: restored, withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                atPath: path, toPath: (restored as NSString).appendingPathComponent(SQLiteStore.fileName))
            let copy = try SQLiteStore(directory: restored)
            #expect(try await copy.exportState() == live)
            try await copy.close()

            #expect(try await console.errorCode("store", "backup", "{}", client: "alice") == "forbidden")
            #expect(try await console.errorCode("store", "backup", #"{"to":"/tmp"}"#) == "invalid_request")
            #expect(try await console.request("store", "backup", "{}", client: "ops").contains(#""status":"ok""#))
        }
    }

    @Test(
        "eight requests in a row: one backup is taken, seven refused with when to ask again, the scheduled backups untouched"
    )
    func requestsBounded() async throws {
        let backups = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: backups) }
        try FileManager.default.createDirectory(atPath: backups, withIntermediateDirectories: true)
        // A week of daily backups, as many as `state.backup.keep` keeps.
        let daily = (1...7).map { BackupNaming.name(at: Date().addingTimeInterval(-86_400 * Double($0))) }
        for name in daily {
            try Data("daily \(name)".utf8).write(
                to: URL(fileURLWithPath: (backups as NSString).appendingPathComponent(name)))
        }
        var settings = RelaySettings()
        settings.backupDirectory = backups
        settings.backupInterval = 0
        settings.backupKeep = 7
        try await withRecorder(.directory, settings: settings) { console async throws in
            let topics = JSONTopics(prefix: "trellis")
            for _ in 1...8 { await console.send("{}", on: topics.request(service: "store", action: "backup")) }
            let replies = console.messages(on: topics.response(service: "store", action: "backup"))
            let objects = try replies.map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any])
            }
            #expect(objects.count == 8)
            #expect(objects.filter { $0["status"] as? String == "ok" }.count == 1, "\(replies.map(\.text))")
            let data = try #require(
                objects.first?["data"] as? [String: Any], "the first is taken: \(replies.map(\.text))")
            let taken = try #require((data["taken_at"] as? String).flatMap(ISO8601Time.parse))
            for refused in objects.dropFirst() {
                #expect(refused["status"] as? String == "error")
                #expect(refused["code"] as? String == "rate_limited", "\(refused)")
                // The answer names when the next request is allowed: a minute after the one taken.
                let sentence = try #require(refused["error"] as? String)
                let next = try #require(
                    sentence.components(separatedBy: "the next may be asked for from ").last.flatMap(ISO8601Time.parse),
                    "\(sentence)")
                #expect(abs(next.timeIntervalSince(taken) - 60) < 5, "\(sentence)")
            }

            let present = try FileManager.default.contentsOfDirectory(atPath: backups).sorted()
            let requested = present.filter { $0.hasPrefix("trellis-requested-") }
            #expect(requested == [data["file"] as? String], "\(present)")
            #expect(
                present.filter { !$0.hasPrefix("trellis-requested-") } == daily.sorted(),
                "the daily backups are all kept")
            for name in daily {
                let text = try String(
                    contentsOfFile: (backups as NSString).appendingPathComponent(name), encoding: .utf8)
                #expect(text == "daily \(name)")
            }
        }
    }

    @Test("a request while a backup is being written is answered busy at once, and takes none")
    func busy() async throws {
        var settings = RelaySettings()
        settings.backupDirectory = temporaryDirectory()
        settings.backupRequestInterval = 0
        try await withEngine(.inMemory, settings: settings) { harness in
            let now = Date()
            #expect(harness.engine.backups.begin(.schedule, at: now, requestInterval: 0) == .start)
            let reply = await harness.send("{}", on: "trellis/request/store/backup", at: now.addingTimeInterval(1))
            let answer = try #require(reply.first { $0.topic == "trellis/response/store/backup" }?.text)
            #expect(
                answer
                    == #"{"code":"busy","error":"a scheduled backup is being written since \#(ISO8601Time.format(now)); ask again once it is done","status":"error"}"#
            )
            #expect(!FileManager.default.fileExists(atPath: settings.backupDirectory))
            harness.engine.backups.finish()
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
        // The schedule runs beside the relay service, which needs no broker for it.
        try await withUnconnectedService(.directory, settings: settings) { relay in
            let schedule = Task { try await BackupService(relay: relay, logger: relay.engine.logger).run() }
            defer { schedule.cancel() }
            func files() -> [String] {
                ((try? FileManager.default.contentsOfDirectory(atPath: backups)) ?? []).filter {
                    $0.hasSuffix(".sqlite")
                }.sorted()
            }
            try await eventually("a first backup is written", timeout: .seconds(30)) { !files().isEmpty }
            let first = files()[0]
            try await eventually("two later backups replaced the first", timeout: .seconds(30)) {
                let now = files()
                return now.count == 2 && !now.contains(first)
            }
            #expect(files().count == 2)
            schedule.cancel()
            try await schedule.value
        }
    }
}

/// A fresh path under the temporary directory, not created.
private func temporaryDirectory() -> String {
    (NSTemporaryDirectory() as NSString).appendingPathComponent("trellis-backups-\(UUID().uuidString)")
}
