import Foundation
import Logging
import Testing
import TrellisApplication
import TrellisBroker
import TrellisMQTT
import TrellisRelay
import TrellisStoreSQLite
import TrellisTestSupport

@testable import trellis

@Suite("Configuration file, environment, flags and reload")
struct ConfigurationTests {
    static func write(_ text: String, to name: String = "trellis.yaml", in directory: String) throws -> String {
        let path = directory + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Precedence and each setting's checks are tested in the process (EffectiveConfigurationTests);
    /// here, what `config check` prints of them, and what `run` makes of its flags.
    @Test("config check prints each value with its source; a flag beats the environment and the file")
    func precedence() async throws {
        let directory = temporaryDirectory()
        let file = try Self.write("spam:\n  limit: 20\n  window: 5\nplant:\n  host_name: FromFile\n", in: directory)
        let environment = ["TRELLIS_SPAM_LIMIT": "30", "TRELLIS_SPAM_WINDOW": "6"]
        let checked = try await EffectiveConfiguration.$environment.withValue(environment) {
            try await EffectiveConfiguration.forCommand(file: file).report
        }
        #expect(checked.contains("spam.limit = 30    # from TRELLIS_SPAM_LIMIT"))
        #expect(checked.contains("spam.window = 6    # from TRELLIS_SPAM_WINDOW"))
        #expect(checked.contains("plant.host_name = FromFile    # from \(file)"))
        #expect(checked.contains("stats.interval = 10    # from the default"))

        // A flag beats both: `trellis run` with an invalid flag value names the flag as the source.
        let run = try RunCommand.parse(["--config", file, "--spam-limit", "0"])
        // Refused as it reads its settings, so `run` returns before it would start anything.
        try #require(await Self.refuses(run, environment: environment))
        await #expect {
            try await EffectiveConfiguration.$environment.withValue(environment) { try await run.run() }
        } throws: {
            "\($0)".contains("spam.limit = 0 (from a flag) is not allowed")
        }
    }

    @Test("config check accepts the example file as shipped, which is what config example prints")
    func exampleIsValid() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let example = root.appendingPathComponent("trellis.example.yaml").path
        let checked = try await EffectiveConfiguration.load(file: example, environment: [:])
        #expect(checked.file == example)
        #expect(
            ExampleConfiguration.text == (try String(contentsOfFile: example, encoding: .utf8)),
            "trellis.example.yaml is stale: run `trellis config example > trellis.example.yaml`")
    }

    @Test("config check and run refuse a bad file, naming each problem's key and what is allowed")
    func badFile() async throws {
        let directory = temporaryDirectory()
        let file = try Self.write("spam:\n  limt: 3\nlog:\n  format: xml\n", to: "bad.yaml", in: directory)
        // Named as an argument or as the other commands name it.
        for arguments in [[file], ["--config", file]] {
            let check = try ConfigCommand.Check.parse(arguments)
            await #expect {
                try await check.run()
            } throws: { error in
                let text = "\(error)"
                return error is CommandFailure && text.contains("unknown key spam.limt")
                    && text.contains("log.format = xml (from \(file)) is not allowed: use one of text, json")
            }
        }
        #expect(throws: (any Error).self) { try ConfigCommand.Check.parse([file, "--config", file + ".other"]) }
        let run = try RunCommand.parse(["--config", file, "--broker", "127.0.0.1:1"])
        try #require(await Self.refuses(run, environment: [:]))
        await #expect {
            try await run.run()
        } throws: { error in
            error is CommandFailure && "\(error)".contains("Trellis does not start")
                && "\(error)".contains("unknown key spam.limt")
        }
    }

    /// Whether the settings `run` reads are refused, so that its `run()` ends before starting anything.
    static func refuses(_ run: RunCommand, environment: [String: String]) async -> Bool {
        (try? await EffectiveConfiguration.load(file: run.config, environment: environment, flags: run.flagValues))
            == nil
    }

    @Test("SIGHUP lowers the spam limit without a reconnect; a bad file on SIGHUP keeps the old limits")
    func reloadOnSIGHUP() async throws {
        try await withTestBroker { broker in
            let directory = temporaryDirectory()
            let file = try Self.write("spam:\n  limit: 8\n  window: 600\nstats:\n  interval: 0.2\n", in: directory)
            let (observer, inbox) = try await TestClients.connectCollecting(
                to: broker, "rpi/fromrpi/#", "trellis/events", "trellis/stats", "trellis/status")
            let trellis = try TrellisBinary.start([
                "run", "--config", file, "--broker", broker.address,
                "--state", directory + "/state"
            ])
            try await inbox.wait("online") { $0.last { $0.topic == "trellis/status" }?.text == "online" }
            try await inbox.messages(on: "trellis/stats", timeout: .seconds(30))

            func burst(_ sender: String, _ count: Int) async throws {
                for id in 0..<count {
                    let request = "ID:\(id);sender:\(sender);receiver:Host-RPI3B+;payload:;operation:REQ_numPlants"
                    try await observer.publishAndWait(topic: "rpi/torpi/\(sender)", payload: Array(request.utf8))
                }
            }
            func kickedAt(_ sender: String) async -> Int? {
                let replies = await inbox.received(on: "rpi/fromrpi/\(sender)").compactMap(\.text)
                return replies.firstIndex { $0.hasSuffix("operation:ERR_kickedForSpam") }.map { $0 + 1 }
            }

            try await burst("first", 9)
            try await inbox.messages(on: "rpi/fromrpi/first", count: 9)
            #expect(await kickedAt("first") == 9)

            _ = try Self.write("spam:\n  limit: 3\n  window: 600\nstats:\n  interval: 0.2\n", in: directory)
            trellis.process.signal(SIGHUP)
            let reloaded = try await inbox.messages(on: "trellis/events")
            #expect(reloaded[0].text?.contains(#""event":"config_reloaded""#) == true)
            #expect(
                reloaded[0].text?.contains(#"{"from":"8","key":"spam.limit","to":"3"}"#) == true,
                "\(reloaded[0].text ?? "")")
            try await burst("second", 4)
            try await inbox.messages(on: "rpi/fromrpi/second", count: 4)
            #expect(await kickedAt("second") == 4)

            _ = try Self.write("spam:\n  limit: [oops\n", in: directory)
            trellis.process.signal(SIGHUP)
            let refused = try await inbox.messages(on: "trellis/events", count: 2)
            #expect(refused[1].text?.contains(#""event":"config_refused""#) == true)
            try await burst("third", 4)
            try await inbox.messages(on: "rpi/fromrpi/third", count: 4)
            #expect(await kickedAt("third") == 4)

            #expect(await inbox.received(on: "trellis/status").map(\.text) == ["online"], "the relay reconnected")
            #expect(try await trellis.terminate() == 0)
            await observer.shutdown()
        }
    }

    @Test(
        "the dialect of the shared plant topics is reloadable: lossless echoes the ID, original answers with ID 0"
    )
    func dialectReload() async throws {
        let (directory, configuration, relay, reloader, store) = try await Self.reloadable(
            "plant:\n  dialect: lossless\n")
        let file = try #require(configuration.file)
        let request = MQTTMessage(
            topic: "rpi/torpi",
            payload: Array("ID:5;sender:phone;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants".utf8),
            qos: .atLeastOnce, retain: false, properties: MQTTProperties())
        func answer() async -> [String] {
            await relay.engine.process(request, at: Date()).map { String(decoding: $0.payload, as: UTF8.self) }
        }
        #expect(await answer() == ["ID:5;sender:Host-RPI3B+;receiver:phone;payload:0;operation:RES_numPlants"])

        _ = try Self.write("plant:\n  dialect: original\n", in: directory)
        // What SIGHUP runs (`reloadOnSIGHUP` sends the signal to `trellis run`).
        await EffectiveConfiguration.$environment.withValue([:]) { await reloader.reload(reason: "SIGHUP") }
        let reloaded = try await EffectiveConfiguration.load(file: file, environment: [:])
        #expect(
            reloaded.changes(from: configuration).map { "\($0.key): \($0.old) → \($0.new)" } == [
                "plant.dialect: lossless → original"
            ])
        #expect(await answer() == ["ID:0;sender:Host-RPI3B+;receiver:phone;payload:0;operation:RES_numPlants"])
        try await store.close()
    }

    @Test(
        "a reload may not raise devices.max_code_bytes past the packet size the relay connected with, whatever the file says of it"
    )
    func codeBoundOutgrowsPackets() async throws {
        let (directory, _, relay, reloader, store) = try await Self.reloadable("devices:\n  max_code_bytes: 1048576\n")

        // Valid as a file (32 MiB packets hold two codes of 8 MiB), but broker.max_packet_bytes needs a restart:
        // the connection still announces 4 MiB, and an 8 MiB upload would be held back unanswered.
        _ = try Self.write(
            "broker:\n  max_packet_bytes: 33554432\ndevices:\n  max_code_bytes: 8388608\n", in: directory)
        await EffectiveConfiguration.$environment.withValue([:]) { await reloader.reload(reason: "SIGHUP") }
        #expect(relay.engine.settings.maxCodeBytes == 1_048_576)

        // Within the running packet size, the same reload is taken.
        _ = try Self.write("devices:\n  max_code_bytes: 1572864\n", in: directory)
        await EffectiveConfiguration.$environment.withValue([:]) { await reloader.reload(reason: "SIGHUP") }
        #expect(relay.engine.settings.maxCodeBytes == 1_572_864)
        try await store.close()
    }

    /// `text` written as trellis.yaml in a new directory (returned, for the file's next version), its
    /// configuration, a relay on an in-memory store that is never started (a reload applies to its
    /// engine, which needs no broker), and its reloader.
    static func reloadable(_ text: String) async throws -> (
        String, EffectiveConfiguration, RelayService, ConfigReloader, SQLiteStore
    ) {
        let directory = temporaryDirectory()
        let file = try Self.write(text, in: directory)
        var quiet = Logger(label: "trellis.test.reload")
        quiet.logLevel = .critical
        let configuration = try await EffectiveConfiguration.load(file: file, environment: [:])
        let store = try SQLiteStore.inMemory()
        let nobody = try LoopbackSocket(listening: false)
        let client = try MQTTClient(
            configuration: MQTTConfiguration(host: "127.0.0.1", port: nobody.port, clientID: "reloaded"))
        let relay = RelayService(client: client, store: store, settings: configuration.relaySettings, logger: quiet)
        let reloader = ConfigReloader(configuration: configuration, flags: [:], relay: relay, logger: quiet)
        return (directory, configuration, relay, reloader, store)
    }
}
