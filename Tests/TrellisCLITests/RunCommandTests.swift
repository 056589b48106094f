import Foundation
import Testing
import TrellisApplication
import TrellisBroker
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisTestSupport

@testable import trellis

@Suite("trellis run, as a user runs it")
struct RunCommandTests {
    @Test("--help documents every subcommand and option")
    func help() throws {
        #expect(TrellisCommand.helpMessage().contains("run"))
        let run = RunCommand.helpMessage()
        for option in [
            "--broker", "--broker-config", "--state", "--log-level", "--host-name", "--client-id", "--plants-file"
        ] {
            #expect(run.contains(option), "run --help lacks \(option)")
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
        let (trellis, config, port) = try await TrellisBinary.startOwningBroker(
            in: temporaryDirectory(), ready: "connected to the broker")
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
        // The broker has been spawned; the service group may not run yet.
        let (trellis, config, port) = try await TrellisBinary.startOwningBroker(
            in: temporaryDirectory(), ready: "started mosquitto")
        trellis.process.signal(SIGTERM)
        try await expectStoppedCleanly(trellis, config: config, port: port)
    }

    /// Trellis exited with status 0 and left no broker behind.
    private func expectStoppedCleanly(_ trellis: TrellisBinary, config: String, port: Int) async throws {
        #expect(try await trellis.waitForExit() == 0)
        #expect(mosquittoPIDs(config: config).isEmpty)
        #expect(!PortProbe.isAccepting(host: "127.0.0.1", port: port))
    }

    @Test("a start-up problem ends run with one clear line, a command failure (exit status 1)")
    func startupFailure() throws {
        do {
            _ = try MosquittoProcess(configPath: "/nonexistent/broker.conf")
            Issue.record("a broker configuration that is not there was taken")
        } catch {
            let failure = TrellisApplication.failure(of: error)
            #expect(failure is CommandFailure)
            #expect(
                "\(failure)"
                    == "cannot read the broker configuration /nonexistent/broker.conf: no such file; "
                    + "pass another file with --broker-config FILE")
        }
        let store = TrellisApplication.failure(of: StoreError(code: .cannotOpen, message: "cannot open the store at x"))
        #expect(store is CommandFailure)
        #expect("\(store)".hasSuffix("; Trellis does not start and leaves the state as it is"), "\(store)")
        struct Unforeseen: Error {}
        #expect(TrellisApplication.failure(of: Unforeseen()) is Unforeseen)
    }

    @Test("start-up problems name what is wrong and what to do")
    func startupErrors() async throws {
        #expect {
            try MosquittoProcess(configPath: "/nonexistent/broker.conf")
        } throws: {
            "\($0)".contains("cannot read the broker configuration /nonexistent/broker.conf: no such file")
        }
        do {
            _ = try await EffectiveConfiguration.load(
                file: nil, environment: [:], flags: ["broker.address": .string("not a broker:port")])
            Issue.record("not a broker:port was taken")
        } catch {
            #expect("\(error)".contains("mqtts://HOST[:PORT] (TLS, port 8883) or HOST[:PORT]"), "\(error)")
        }
        #expect {
            try MosquittoProcess.binary(environment: ["TRELLIS_MOSQUITTO": "/nonexistent/mosquitto"])
        } throws: {
            "\($0)".contains("TRELLIS_MOSQUITTO names /nonexistent/mosquitto, which is not an executable file")
        }
        #expect(try MosquittoProcess.binary(environment: ["PATH": "/nonexistent"]).hasSuffix("/mosquitto"))
    }

    @Test("a port already in use is reported, naming the address, before any mosquitto starts")
    func portInUse() async throws {
        let taken = try LoopbackSocket(listening: true)
        let directory = temporaryDirectory()
        ProcessCensus.started("mosquitto")
        let broker = try MosquittoProcess(configPath: try brokerConfig(port: taken.port, in: directory))
        await #expect {
            try await broker.start()
        } throws: {
            "\($0)".contains("127.0.0.1:\(taken.port) is already in use by another program")
        }
        #expect(broker.pid == nil)
    }

    @Test("a later listener whose port is in use is reported, naming its address")
    func laterPortInUse() async throws {
        // The first listener's port is held but refuses connections: free to the probe, and no other
        // program can take it meanwhile.
        let first = try LoopbackSocket(listening: false)
        let taken = try LoopbackSocket(listening: true)
        let directory = temporaryDirectory()
        let config = try brokerConfig(port: first.port, in: directory)
        let handle = try #require(FileHandle(forWritingAtPath: config))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("listener \(taken.port) 127.0.0.1\n".utf8))
        try handle.close()
        ProcessCensus.started("mosquitto")
        let broker = try MosquittoProcess(configPath: config)
        await #expect {
            try await broker.start()
        } throws: {
            "\($0)".contains("127.0.0.1:\(taken.port) is already in use")
        }
        #expect(broker.pid == nil)
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

/// A TCP socket on 127.0.0.1 bound to a port the kernel chose: listening (the port is in use), or
/// not (the port is held, yet a connection to it is refused). Closed when released.
final class LoopbackSocket {
    let port: Int
    private let descriptor: Int32

    init(listening: Bool) throws {
        let socket = try LoopbackListener(backlog: listening ? 16 : nil)
        descriptor = socket.fd
        port = socket.port
    }

    deinit { close(descriptor) }
}
