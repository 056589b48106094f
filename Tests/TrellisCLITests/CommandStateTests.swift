import ArgumentParser
import Foundation
import Testing
import TrellisApplication
import TrellisTestSupport

@testable import trellis

/// Every command finds the state where `trellis run` finds it, makes it there when it changes it and
/// there is none yet, and reads its settings from the same file, `TRELLIS_…` variables and flags.
@Suite("commands find, make and read the state as trellis run does")
struct CommandStateTests {
    /// A working directory with nothing in it, as a household's new machine has.
    static func emptyWorkingDirectory() throws -> String {
        let directory = temporaryDirectory() + "/home"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("plants import-host before the first run makes the state; trellis run then serves the imported plants")
    func importBeforeFirstRun() async throws {
        let userdata = try PlantsImportHostTests.userdata()
        let home = try Self.emptyWorkingDirectory()
        let imported = try await TrellisBinary.run(["plants", "import-host", userdata], in: home)
        #expect(imported.status == 0, "\(imported.output)")
        #expect(imported.output.contains("added 4 plants to trellis-state"), "\(imported.output)")
        #expect(FileManager.default.fileExists(atPath: home + "/trellis-state/trellis.sqlite"))

        try await withTestBroker { broker in
            let (asker, inbox) = try await TestClients.connectCollecting(to: broker, "rpi/fromrpi", "trellis/status")
            let trellis = try TrellisBinary.start(["run", "--broker", broker.address], in: home)
            try await inbox.wait("online") { $0.last { $0.topic == "trellis/status" }?.text == "online" }
            let request = "ID:1;sender:phone;receiver:Host-RPI3B+;payload:all;operation:REQ_plantInfoOnStartup"
            try await asker.publishAndWait(topic: "rpi/torpi", payload: Array(request.utf8))
            // The app's dialect answers with one message per plant, host.py's JSON with `:` written `--`.
            let answers = try await inbox.messages(on: "rpi/fromrpi", count: 4).compactMap(\.text)
            #expect(answers.allSatisfy { $0.hasSuffix("operation:RES_plantInfoOnStartup") }, "\(answers)")
            for plant in [
                #""Name"-- "Basil", "Sensors"-- "[\"0x38\"]""#, #""Name"-- "Fern", "Sensors"-- "[\"0x36\", \"0x37\"]""#,
                #""Name"-- "Mint", "Sensors"-- "[\"0x39\", \"0x3a\"]""#
            ] {
                #expect(answers.contains { $0.contains(plant) }, "\(plant) in \(answers)")
            }
            #expect(try await trellis.terminate() == 0, "\(trellis.output)")
            await asker.shutdown()
        }
    }

    /// Runs `command` in the process with `environment` as its `TRELLIS_…` variables.
    static func run(_ command: some AsyncParsableCommand, _ environment: [String: String]) async throws {
        var command = command
        try await EffectiveConfiguration.$environment.withValue(environment) { try await command.run() }
    }

    @Test(
        "replay --offline reads TRELLIS_… variables as trellis run does: TRELLIS_PLANT_DIALECT=lossless echoes the ID")
    func replayReadsTheEnvironment() async throws {
        let home = try Self.emptyWorkingDirectory()
        let line =
            #"{"t":"2026-11-22T10:41:05Z","topic":"rpi/torpi","payload":"ID:5;sender:phone;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants","qos":1,"retain":false}"#
        try (line + "\n").write(toFile: home + "/capture.jsonl", atomically: true, encoding: .utf8)
        let records = try CaptureInput.read(home + "/capture.jsonl", skipBadLines: false).records
        /// The replies of `replay capture.jsonl --offline` (with `arguments`) under `environment`.
        func replies(_ environment: [String: String], _ arguments: [String] = []) async throws -> [String] {
            let replay = try ReplayCommand.parse([home + "/capture.jsonl", "--offline"] + arguments)
            return try await EffectiveConfiguration.$environment.withValue(environment) {
                try await replay.replayOffline(records).outputs.compactMap {
                    String(bytes: $0.payload, encoding: .utf8)
                }
            }
        }
        let lossless = try await replies(["TRELLIS_PLANT_DIALECT": "lossless"])
        #expect(lossless == ["ID:5;sender:Host-RPI3B+;receiver:phone;payload:0;operation:RES_numPlants"])
        let original = try await replies([:])
        #expect(original == ["ID:0;sender:Host-RPI3B+;receiver:phone;payload:0;operation:RES_numPlants"])

        // The file under the environment, as for `trellis run`; a bad value is named with its source.
        try "plant:\n  dialect: lossless\n".write(toFile: home + "/trellis.yaml", atomically: true, encoding: .utf8)
        let fromFile = try await replies([:], ["--config", home + "/trellis.yaml"])
        #expect(fromFile.first?.hasPrefix("ID:5;sender:Host-RPI3B+") == true, "\(fromFile)")
        await #expect {
            try await replies(["TRELLIS_PLANT_DIALECT": "klingon"], ["--config", home + "/trellis.yaml"])
        } throws: {
            $0 is CommandFailure
                && "\($0)".contains("plant.dialect = klingon (from TRELLIS_PLANT_DIALECT) is not allowed")
        }
    }

    @Test(
        "a reading command on a fresh directory says there is no state yet, makes none, and fails",
        arguments: [["deadletters"], ["store", "backup", "state.backup"]])
    func readingFindsNoState(_ command: [String]) async throws {
        let home = try Self.emptyWorkingDirectory()
        let state = home + "/trellis-state"
        let parsed = try TrellisCommand.parseAsRoot(
            command.map { $0.hasSuffix(".backup") ? home + "/" + $0 : $0 })
        let reading = try #require(parsed as? any AsyncParsableCommand)
        await #expect {
            try await Self.run(reading, ["TRELLIS_STATE_DIR": state])
        } throws: { error in
            error is CommandFailure
                && "\(error)".hasPrefix(
                    "\(state) holds no Trellis state yet (no trellis.sqlite there): "
                        + "`trellis run` makes one on its first start")
                && !"\(error)".contains("permission")
        }
        #expect(!FileManager.default.fileExists(atPath: state))
    }

    @Test("a state directory that cannot be made is named with what stands in the way, not a permission")
    func unmakeableState() async throws {
        let userdata = try PlantsImportHostTests.userdata()
        let home = try Self.emptyWorkingDirectory()
        try "".write(toFile: home + "/taken", atomically: true, encoding: .utf8)
        let importing = try PlantsCommand.ImportHost.parse([userdata, "--state", home + "/taken/state"])
        await #expect {
            try await Self.run(importing, [:])
        } throws: {
            "\($0)".contains(
                "not imported: cannot make the state directory \(home)/taken/state: \(home)/taken is not a directory")
        }
    }

    @Test("catalog import and store restore make the state where trellis run finds it: state.dir of the environment")
    func changingCommandsFollowTheSettings() async throws {
        let home = try Self.emptyWorkingDirectory()
        try
            "Symbol,Scientific Name,Common Name,Moisture Use,Shade Tolerance,\"Temperature, Minimum (°F)\"\nFERN1,Fernus one,Fern,High,Tolerant,-20\n"
            .write(toFile: home + "/plants.csv", atomically: true, encoding: .utf8)
        let household = ["TRELLIS_STATE_DIR": home + "/household"]
        try await Self.run(try CatalogCommand.Import.parse([home + "/plants.csv"]), household)
        #expect(FileManager.default.fileExists(atPath: home + "/household/trellis.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: home + "/trellis-state"))

        try await Self.run(try StoreCommand.Backup.parse([home + "/household.backup"]), household)
        let moved = ["TRELLIS_STATE_DIR": home + "/moved"]
        try await Self.run(try StoreCommand.Restore.parse([home + "/household.backup"]), moved)
        #expect(FileManager.default.fileExists(atPath: home + "/moved/trellis.sqlite"))
        // `deadletters` reads the restored state there (with no state it would fail).
        try await Self.run(try DeadLettersCommand.parse([]), moved)
    }
}
