import Foundation
import Testing
import TrellisTestSupport

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

    @Test(
        "replay --offline reads TRELLIS_… variables as trellis run does: TRELLIS_PLANT_DIALECT=lossless echoes the ID")
    func replayReadsTheEnvironment() async throws {
        let home = try Self.emptyWorkingDirectory()
        let line =
            #"{"t":"2026-11-22T10:41:05Z","topic":"rpi/torpi","payload":"ID:5;sender:phone;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants","qos":1,"retain":false}"#
        try (line + "\n").write(toFile: home + "/capture.jsonl", atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["TRELLIS_PLANT_DIALECT"] = "lossless"
        let lossless = try await TrellisBinary.run(
            ["replay", "capture.jsonl", "--offline"], in: home, environment: environment)
        #expect(lossless.status == 0, "\(lossless.output)")
        #expect(
            lossless.output.contains("ID:5;sender:Host-RPI3B+;receiver:phone;payload:0;operation:RES_numPlants"),
            "\(lossless.output)")

        environment["TRELLIS_PLANT_DIALECT"] = nil
        let original = try await TrellisBinary.run(
            ["replay", "capture.jsonl", "--offline"], in: home, environment: environment)
        #expect(
            original.output.contains("ID:0;sender:Host-RPI3B+;receiver:phone;payload:0;operation:RES_numPlants"),
            "\(original.output)")

        // The file under the environment, as for `trellis run`; a bad value is named with its source.
        try "plant:\n  dialect: lossless\n".write(toFile: home + "/trellis.yaml", atomically: true, encoding: .utf8)
        let fromFile = try await TrellisBinary.run(
            ["replay", "capture.jsonl", "--offline"], in: home, environment: environment)
        #expect(fromFile.output.contains("ID:5;sender:Host-RPI3B+"), "\(fromFile.output)")
        environment["TRELLIS_PLANT_DIALECT"] = "klingon"
        let refused = try await TrellisBinary.run(
            ["replay", "capture.jsonl", "--offline"], in: home, environment: environment)
        #expect(refused.status == 1)
        #expect(
            refused.output.contains("plant.dialect = klingon (from TRELLIS_PLANT_DIALECT) is not allowed"),
            "\(refused.output)")
    }

    @Test(
        "a reading command on a fresh directory says there is no state yet, makes none, and exits 1",
        arguments: [["deadletters"], ["store", "backup", "state.backup"]])
    func readingFindsNoState(_ command: [String]) async throws {
        let home = try Self.emptyWorkingDirectory()
        let result = try await TrellisBinary.run(command, in: home)
        #expect(result.status == 1, "\(result.output)")
        #expect(
            result.output.contains(
                "trellis: error: trellis-state holds no Trellis state yet (no trellis.sqlite there): "
                    + "`trellis run` makes one on its first start"), "\(result.output)")
        #expect(!result.output.contains("permission"), "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: home + "/trellis-state"))
    }

    @Test("a state directory that cannot be made is named with what stands in the way, not a permission")
    func unmakeableState() async throws {
        let userdata = try PlantsImportHostTests.userdata()
        let home = try Self.emptyWorkingDirectory()
        try "".write(toFile: home + "/taken", atomically: true, encoding: .utf8)
        let result = try await TrellisBinary.run(
            ["plants", "import-host", userdata, "--state", "taken/state"], in: home)
        #expect(result.status == 1, "\(result.output)")
        #expect(
            result.output.contains(
                "not imported: cannot make the state directory taken/state: taken is not a directory"),
            "\(result.output)")
    }

    @Test("catalog import and store restore make the state where trellis run finds it: state.dir of the environment")
    func changingCommandsFollowTheSettings() async throws {
        let home = try Self.emptyWorkingDirectory()
        try
            "Symbol,Scientific Name,Common Name,Moisture Use,Shade Tolerance,\"Temperature, Minimum (°F)\"\nFERN1,Fernus one,Fern,High,Tolerant,-20\n"
            .write(toFile: home + "/plants.csv", atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["TRELLIS_STATE_DIR"] = "household"
        let imported = try await TrellisBinary.run(
            ["catalog", "import", "plants.csv"], in: home, environment: environment)
        #expect(imported.status == 0, "\(imported.output)")
        #expect(FileManager.default.fileExists(atPath: home + "/household/trellis.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: home + "/trellis-state"))

        let backup = try await TrellisBinary.run(
            ["store", "backup", "household.backup"], in: home, environment: environment)
        #expect(backup.status == 0, "\(backup.output)")
        environment["TRELLIS_STATE_DIR"] = "moved"
        let restored = try await TrellisBinary.run(
            ["store", "restore", "household.backup"], in: home, environment: environment)
        #expect(restored.status == 0, "\(restored.output)")
        #expect(restored.output.contains("into moved"), "\(restored.output)")
        let listed = try await TrellisBinary.run(["deadletters"], in: home, environment: environment)
        #expect(listed.status == 0, "\(listed.output)")
        #expect(listed.output.contains("no dead letters match in moved"), "\(listed.output)")
    }
}
