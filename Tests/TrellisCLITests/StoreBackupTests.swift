import Foundation
import Testing
import TrellisBroker
import TrellisMQTT
import TrellisStore
import TrellisStoreSQLite
import TrellisTestSupport
import TrellisApplication

/// `trellis store backup` and `restore`: a backup taken while a relay answers a QoS 1 load
/// restores into a new state; a backup of a stopped relay restores to exactly the same state
/// dump (the binary, end to end); a running relay's state, a damaged file and a newer release's file are
/// refused (`StateBackup`, which the commands run, in-process).
@Suite("Backups of the SQLite state")
struct StoreBackupTests {
    static func dump(_ directory: String) async throws -> StateDump {
        let store = try SQLiteStore(directory: directory)
        let dump = try await store.exportState()
        try await store.close()
        return dump
    }

    @Test(
        "backup under a QoS 1 load, restore into new states, compare the dumps; a running relay's state is not replaced"
    )
    func backupAndRestore() async throws {
        try await withTestBroker { broker in
            let state = temporaryDirectory()
            let trellis = try TrellisBinary.start(["run", "--broker", broker.address, "--state", state])
            try await trellis.waitForOutput("connected to the broker")
            let (phone, seen) = try await TestClients.connectCollecting(to: broker, id: "phones", "rpi/fromrpi/#")

            // A steady QoS 1 load of presses and plant requests while the backup is taken.
            let load = Task {
                for index in 0..<400 {
                    try phone.publish(topic: "p2o/buttons/door/press", payload: [], qos: .atLeastOnce)
                    try phone.publish(
                        topic: "rpi/torpi/c\(index)",
                        payload: ScaleOutTests.request(
                            index, from: "c\(index)",
                            index % 50 == 0 ? "REQ_addNewPlant" : "REQ_numPlants",
                            payload: index % 50 == 0 ? "P\(index),0x\(String(index / 50 + 0x30, radix: 16))" : ""),
                        qos: .atLeastOnce)
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
            try await seen.wait(timeout: .seconds(30), "the load under way") { $0.count >= 20 }
            let underLoad = temporaryDirectory() + "-under-load.sqlite"
            let backup = try await TrellisBinary.run(["store", "backup", underLoad, "--state", state])
            #expect(backup.status == 0, "\(backup.output)")
            #expect(backup.output.contains("backed up \(state) to \(underLoad)"), "\(backup.output)")
            try await load.value
            try await seen.wait(timeout: .seconds(60), "every request answered") { $0.count >= 400 }

            // Restoring into the running relay's state is refused.
            let refused = try await TrellisBinary.run(["store", "restore", underLoad, "--state", state])
            #expect(refused.status == 1)
            #expect(refused.output.contains("a relay is running on \(state)"), "\(refused.output)")

            // The backup taken under load is a whole state of its own.
            let fromLoad = temporaryDirectory()
            let restored = try await TrellisBinary.run(["store", "restore", underLoad, "--state", fromLoad])
            #expect(restored.status == 0, "\(restored.output)")
            let partial = try await Self.dump(fromLoad)
            #expect(partial.tables.first { $0.name == "button" }?.rows.count ?? 0 <= 1)

            // Once the relay stopped, a backup restores to exactly its state.
            #expect(try await trellis.terminate() == 0)
            let final = temporaryDirectory() + "-final.sqlite"
            #expect(try await TrellisBinary.run(["store", "backup", final, "--state", state]).status == 0)
            let again = temporaryDirectory()
            #expect(try await TrellisBinary.run(["store", "restore", final, "--state", again]).status == 0)
            let original = try await Self.dump(state)
            let copy = try await Self.dump(again)
            #expect(copy == original)
            #expect(original.tables.first { $0.name == "button_press" }?.rows.isEmpty == false)

            // Restoring over an existing state keeps the one replaced beside it.
            let over = try await TrellisBinary.run(["store", "restore", underLoad, "--state", again])
            #expect(over.status == 0, "\(over.output)")
            #expect(
                over.output.contains("the state it replaced is kept at \(again)/trellis.sqlite.before-restore-"),
                "\(over.output)")
            await phone.shutdown()
        }
    }

    @Test("an existing file without --force, a damaged file, a newer release's backup and PostgreSQL are refused")
    func refusals() async throws {
        let directory = temporaryDirectory()
        let store = try SQLiteStore(directory: directory)
        _ = try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 7)
        try await store.close()
        let place = StatePlace.sqlite(directory: directory)
        let good = temporaryDirectory() + "-good.sqlite"
        _ = try await StateBackup.backup(place, to: good, force: false)
        let exists = await #expect(throws: CommandFailure.self) {
            try await StateBackup.backup(place, to: good, force: false)
        }
        #expect(exists?.description.contains("give --force") == true, "\(String(describing: exists))")
        _ = try await StateBackup.backup(place, to: good, force: true)

        let garbage = temporaryDirectory() + "-garbage.sqlite"
        try Data((0..<8192).map { UInt8($0 % 251) }).write(to: URL(fileURLWithPath: garbage))
        let damaged = await #expect(throws: CommandFailure.self) {
            try await StateBackup.restore(garbage, into: .sqlite(directory: temporaryDirectory()))
        }
        #expect(damaged?.description.contains("not restored") == true, "\(String(describing: damaged))")

        // A schema version this release does not know: a newer release wrote it.
        let newer = temporaryDirectory() + "-newer.sqlite"
        try FileManager.default.copyItem(atPath: good, toPath: newer)
        let insert =
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
            + "c.execute(\"INSERT INTO grdb_migrations (identifier) VALUES ('from-the-future')\"); c.commit()"
        let edit = try ChildProcess(path: "/usr/bin/python3", arguments: ["-c", insert, newer], outputPath: nil)
        edit.waitUntilExit()
        try #require(edit.terminationStatus == 0)
        let refused = await #expect(throws: CommandFailure.self) {
            try await StateBackup.restore(newer, into: .sqlite(directory: temporaryDirectory()))
        }
        #expect(
            refused?.description.contains("written by a newer release of Trellis") == true,
            "\(String(describing: refused))")

        let postgres = await #expect(throws: CommandFailure.self) {
            try await StateBackup.backup(try StatePlace(naming: "postgres://u@127.0.0.1:1/db"), to: good, force: true)
        }
        #expect(postgres?.description.contains("back it up with pg_dump") == true)
    }
}
