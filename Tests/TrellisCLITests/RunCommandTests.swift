import Foundation
import Testing
import TrellisBroker
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

@Suite("trellis run, as a user runs it")
struct RunCommandTests {
    @Test("--help documents every subcommand and option")
    func help() async throws {
        let top = try await TrellisBinary.run(["--help"])
        #expect(top.status == 0)
        #expect(top.output.contains("run"))
        let run = try await TrellisBinary.run(["run", "--help"])
        #expect(run.status == 0)
        for option in [
            "--broker", "--broker-config", "--state", "--log-level", "--host-name", "--client-id", "--plants-file"
        ] {
            #expect(run.output.contains(option), "run --help lacks \(option)")
        }
    }

    @Test("with --broker it joins a running broker, says online, and on SIGTERM says offline and exits 0")
    func joinsBroker() async throws {
        try await withTestBroker { broker in
            let (watcher, inbox) = try await TestClients.connectCollecting(to: broker, "trellis/status")
            let state = temporaryDirectory()
            let trellis = try TrellisBinary.start(["run", "--broker", broker.address, "--state", state])
            try await inbox.wait("online") { $0.last?.text == "online" }
            #expect(FileManager.default.fileExists(atPath: state + "/trellis.sqlite"))

            #expect(try await trellis.terminate() == 0)
            try await inbox.wait("offline after SIGTERM") { $0.last?.text == "offline" }
            await watcher.shutdown()
        }
    }

    @Test("killed with SIGKILL, its will marks it offline")
    func willOnKill() async throws {
        try await withTestBroker { broker in
            let (watcher, inbox) = try await TestClients.connectCollecting(to: broker, "trellis/status")
            let trellis = try TrellisBinary.start(["run", "--broker", broker.address, "--state", temporaryDirectory()])
            try await inbox.wait("online") { $0.last?.text == "online" }
            trellis.process.signal(SIGKILL)
            _ = try await trellis.waitForExit()
            try await inbox.wait(timeout: .seconds(90), "the will") { $0.last?.text == "offline" }
            await watcher.shutdown()
        }
    }

    @Test("without --broker it starts mosquitto from the config, and SIGINT leaves no mosquitto behind")
    func ownsBroker() async throws {
        let (trellis, config, port) = try startOwningBroker()
        try await trellis.waitForOutput("connected to the broker")
        let pids = mosquittoPIDs(config: config)
        #expect(pids.count == 1)

        // The broker has accounts: the watcher logs in as the local operator `trellis run` made.
        let state = (config as NSString).deletingLastPathComponent + "/state"
        let password = try String(contentsOfFile: state + "/operator.password", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let watcher = try MQTTClient(
            configuration: MQTTConfiguration(
                host: "127.0.0.1", port: port, clientID: "w-\(port)",
                username: "operator", password: password))
        watcher.start()
        try await watcher.waitUntilConnected()
        let inbox = await MessageCollector.collecting(watcher)
        try await watcher.subscribe("trellis/status")
        try await inbox.wait("online") { $0.last?.text == "online" }
        await watcher.shutdown()

        trellis.process.signal(SIGINT)
        try await expectStoppedCleanly(trellis, config: config, port: port)
    }

    @Test("SIGTERM while the broker is still starting stops Trellis gracefully, leaving no mosquitto behind")
    func signalDuringStartup() async throws {
        let (trellis, config, port) = try startOwningBroker()
        // The broker has been spawned; the service group may not run yet.
        try await trellis.waitForOutput("started mosquitto")
        trellis.process.signal(SIGTERM)
        try await expectStoppedCleanly(trellis, config: config, port: port)
    }

    /// `trellis run` starting its own broker from a config on a free loopback port.
    private func startOwningBroker() throws -> (trellis: TrellisBinary, config: String, port: Int) {
        let directory = temporaryDirectory()
        let port = try #require(PortProbe.freeLoopbackPort())
        let config = try brokerConfig(port: port, in: directory)
        let trellis = try TrellisBinary.start(
            ["run", "--broker-config", config, "--state", directory + "/state"], in: directory)
        return (trellis, config, port)
    }

    /// Trellis exited with status 0 and left no broker behind.
    private func expectStoppedCleanly(_ trellis: TrellisBinary, config: String, port: Int) async throws {
        #expect(try await trellis.waitForExit() == 0)
        #expect(mosquittoPIDs(config: config).isEmpty)
        #expect(!PortProbe.isAccepting(host: "127.0.0.1", port: port))
    }

    @Test(
        "start-up problems are one clear line and exit status 1",
        arguments: [
            (
                ["--broker-config", "/nonexistent/broker.conf"], [String: String](),
                "cannot read the broker configuration"
            ),
            (["--broker", "not a broker:port"], [:], "mqtts://HOST[:PORT] (TLS, port 8883) or HOST[:PORT]"),
            (
                ["--broker-config", "CONFIG"], ["TRELLIS_MOSQUITTO": "/nonexistent/mosquitto"],
                "TRELLIS_MOSQUITTO names /nonexistent/mosquitto, which is not an executable file"
            )
        ])
    func startupErrors(arguments: [String], environment: [String: String], expected: String) async throws {
        let directory = temporaryDirectory()
        let config = try brokerConfig(port: try #require(PortProbe.freeLoopbackPort()), in: directory)
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        let args = ["run", "--state", directory + "/state"] + arguments.map { $0 == "CONFIG" ? config : $0 }
        let result = try await TrellisBinary.run(args, in: directory, environment: env)
        #expect(result.status != 0)
        #expect(result.output.contains(expected), "output: \(result.output)")
    }

    @Test("a port already in use is reported, naming the address")
    func portInUse() async throws {
        try await withTestBroker { broker in
            let directory = temporaryDirectory()
            let config = try brokerConfig(port: broker.port, in: directory)
            let result = try await TrellisBinary.run(
                ["run", "--broker-config", config, "--state", directory + "/state"], in: directory)
            #expect(result.status == 1)
            #expect(result.output.contains("127.0.0.1:\(broker.port) is already in use"), "output: \(result.output)")
        }
    }

    @Test("a later listener whose port is in use is reported, naming its address")
    func laterPortInUse() async throws {
        try await withTestBroker { broker in
            // The first listener's port was free when probed; another test may take it before this
            // broker binds it, which is reported just as well: then try again on another port.
            for attempt in 1...5 {
                let directory = temporaryDirectory()
                let first = try #require(PortProbe.freeLoopbackPort())
                let config = try brokerConfig(port: first, in: directory)
                let handle = try #require(FileHandle(forWritingAtPath: config))
                try handle.seekToEnd()
                try handle.write(contentsOf: Data("listener \(broker.port) 127.0.0.1\n".utf8))
                try handle.close()
                let result = try await TrellisBinary.run(
                    ["run", "--broker-config", config, "--state", directory + "/state"], in: directory)
                if attempt < 5, result.output.contains("127.0.0.1:\(first) is already in use") { continue }
                #expect(result.status == 1)
                #expect(
                    result.output.contains("127.0.0.1:\(broker.port) is already in use"), "output: \(result.output)")
                return
            }
        }
    }

    @Test("the embedded default broker configuration is broker.conf")
    func embeddedConfig() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let shipped = try String(contentsOf: root.appendingPathComponent("broker.conf"), encoding: .utf8)
        #expect(EmbeddedBrokerConfig.text == shipped)
    }
}

/// A fresh temporary directory.
func temporaryDirectory() -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-cli-\(UUID().uuidString)").path
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// The shipped broker.conf, moved to `port` with persistence in `directory`.
func brokerConfig(port: Int, in directory: String) throws -> String {
    let text = EmbeddedBrokerConfig.text
        .replacingOccurrences(of: "listener 1883 127.0.0.1", with: "listener \(port) 127.0.0.1")
        .replacingOccurrences(of: "persistence_location trellis-state/", with: "persistence_location \(directory)/")
    let path = directory + "/broker.conf"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// Process ids of mosquitto brokers running with `config`.
func mosquittoPIDs(config: String) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { Int32($0) }.filter { pid in
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
        let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        return words.first?.hasSuffix("mosquitto") == true && words.contains(config)
    }
}
