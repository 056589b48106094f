import Foundation
import Testing
import TrellisTestSupport
import TrellisWire
import TrellisApplication
@testable import trellis

/// `trellis capture import` as a user meets it: its usage and refusals (parsed and run in-process), and a
/// golden test made from the wire by the binary itself.
@Suite("capture import on the command line")
struct CaptureImportCommandTests {
    @Test("the usage names every option, and --port is required")
    func usage() {
        let help = TrellisCommand.helpMessage(for: CaptureImportCommand.self)
        for option in [
            "--port <n>", "--output <capture.jsonl>", "--expected <file>", "--expected-client <id>",
            "--mqtt-version <version>", "docs/record-replay.md"
        ] {
            #expect(help.contains(option), "\(help)")
        }
        let message = CaptureCommandTests.parseRefusal(["capture", "import", "x.pcap"])
        #expect(message.contains("--port N"), "\(message)")
    }

    @Test("a file that is not a capture is refused with the reason and exit status 1")
    func notACapture() throws {
        let directory = temporaryDirectory()
        let text = "{\"t\":\"2026-11-22T10:41:05Z\"}\n"
        try text.write(toFile: directory + "/x.jsonl", atomically: true, encoding: .utf8)
        var importer = WireImport(ports: [1883])
        let problems = (importer.push(Data(text.utf8)) + importer.finish()).compactMap { event in
            if case let .problem(problem) = event { "\(problem)" } else { nil }
        }
        #expect(problems.count == 1 && problems[0].contains("not a pcap or pcapng capture"), "\(problems)")
        // The command, run in-process, reports it and fails (exit status 1), writing what it read.
        let command = try #require(
            try TrellisCommand.parseAsRoot([
                "capture", "import", directory + "/x.jsonl", "--port", "1883", "-o", directory + "/out.jsonl"
            ]) as? CaptureImportCommand)
        let error = #expect(throws: CommandFailure.self) { try command.run() }
        #expect(
            error?.description.contains("1 problem(s) in \(directory)/x.jsonl") == true, "\(error?.description ?? "")")
        #expect(try String(contentsOfFile: directory + "/out.jsonl", encoding: .utf8).isEmpty)
    }

    @Test(
        "Trellis's answers captured on the wire by tcpdump become a golden file its offline replay matches",
        .enabled(if: CaptureAbility.canCapture, "needs tcpdump and the right to capture (root or CAP_NET_RAW)"))
    func goldenFromTheWire() async throws {
        let directory = temporaryDirectory()
        // Discovery (homeassistant/…) is not among what the watcher subscribed to, and left out it keeps the
        // capture small: on a busy machine a full kernel buffer would drop packets, which the import reports.
        try "homeassistant: {enabled: false}\n".write(
            toFile: directory + "/no-ha.yaml", atomically: true, encoding: .utf8)
        let brokerPort = try await withTestBroker { broker in
            let port = "\(broker.port)"
            let tcpdump = try ToolProcess([
                CaptureAbility.tcpdump!, "-i", "lo", "--immediate-mode", "-U", "-B", "65536", "-s", "0",
                "-w", directory + "/pi.pcap", "tcp port \(port)"
            ])
            try await tcpdump.waitFor("listening on lo")
            let status = try ToolProcess([
                "/usr/bin/stdbuf", "-oL", "/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", port, "-t",
                "trellis/status", "-C", "1"
            ])
            let trellis = try TrellisBinary.start([
                "run", "--broker", broker.address, "--state", directory + "/state",
                "--config", directory + "/no-ha.yaml"
            ])
            try await status.waitFor("online")
            let watcher = try ToolProcess([
                "/usr/bin/stdbuf", "-oL", "/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", port, "-V", "5", "-q", "2",
                "--retain-as-published",
                "-i", "watcher", "-t", "rpi/fromrpi", "-C", "1", "-d"
            ])
            try await watcher.waitFor("SUBACK")
            // Two requests that succeed (the app's dialect answers only the second): a dead letter's received_at is
            // the live clock, which a replay cannot repeat.
            for request in [
                "ID:0;sender:Bob's iPhone;receiver:Host-RPI3B+;payload:Fern,0x36;operation:REQ_addNewPlant",
                "ID:1;sender:Bob's iPhone;receiver:Host-RPI3B+;payload:all;operation:REQ_plantInfoOnStartup"
            ] {
                _ = try await ToolProcess.run([
                    "/usr/bin/mosquitto_pub", "-h", "127.0.0.1", "-p", port, "-V", "mqttv311", "-q", "1", "-i",
                    "iphone",
                    "-t", "rpi/torpi", "-m", request
                ])
            }
            try await watcher.waitForExit()
            _ = try await trellis.terminate()
            // tcpdump may lag behind on a busy machine: stop it once the file holds the answer's delivery.
            try await eventually("tcpdump wrote the answer (tcpdump printed: \(tcpdump.text))") {
                guard let data = FileManager.default.contents(atPath: directory + "/pi.pcap") else { return false }
                var importer = WireImport(ports: [UInt16(broker.port)])
                let events = importer.push(data) + importer.finish()
                // Segments may reach the file out of order: wait until none is missing (a file cut mid-record is fine).
                let missing = events.contains {
                    if case let .problem(problem) = $0 { problem.connection != nil } else { false }
                }
                return !missing
                    && events.contains {
                        if case let .message(message) = $0 { message.clientID == "watcher" } else { false }
                    }
            }
            try await tcpdump.stop()
            return broker.port
        }
        let imported = try await TrellisBinary.run(
            [
                "capture", "import", "pi.pcap", "--port", "\(brokerPort)", "-o", "capture.jsonl",
                "--expected", "answers.jsonl", "--expected-client", "watcher"
            ], in: directory)
        #expect(imported.status == 0, "\(imported.output)")
        let capture = try String(contentsOfFile: directory + "/capture.jsonl", encoding: .utf8)
        #expect(capture.contains(#""topic":"rpi/torpi""#) && capture.contains(#""client":"iphone""#), "\(capture)")
        let answers = try String(contentsOfFile: directory + "/answers.jsonl", encoding: .utf8)
        #expect(answers.split(separator: "\n").count == 1, "\(answers)")
        let replay = try await TrellisBinary.run(
            [
                "replay", "capture.jsonl", "--offline", "--only", "rpi/torpi", "--config", "no-ha.yaml",
                "--expect", "answers.jsonl"
            ], in: directory)
        #expect(replay.status == 0, "\(replay.output)")
        #expect(replay.output.contains("matches answers.jsonl"), "\(replay.output)")
    }
}
