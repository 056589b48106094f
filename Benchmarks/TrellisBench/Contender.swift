import Foundation
import TrellisBroker
import TrellisRelay
import TrellisStore

/// The benchmark's Mosquitto: broker.conf's settings on a free loopback port.
enum BenchBroker {
    static func start(in work: String) async throws -> MosquittoProcess {
        guard let port = PortProbe.freeLoopbackPort() else { throw BenchError("no free loopback port") }
        let config = EmbeddedBrokerConfig.text
            .replacingOccurrences(of: "listener 1883 127.0.0.1", with: "listener \(port) 127.0.0.1")
            .replacingOccurrences(of: "persistence_location trellis-state/", with: "persistence_location \(work)/")
        let path = work + "/broker.conf"
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        let broker = try MosquittoProcess(configPath: path, logPath: work + "/mosquitto.log")
        try await broker.start()
        return broker
    }
}

/// A relay under test, run as a child process.
struct Contender {
    let process: ChildProcess
    let output: String

    /// Builds and starts the C baseline.
    static func baseline(port: Int, work: String) async throws -> Contender {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("baseline/relay.c").path
        let binary = work + "/relay"
        let compile = try ChildProcess(path: "/usr/bin/cc", arguments: ["-O2", "-o", binary, source, "-lmosquitto"],
                                       outputPath: work + "/cc.log")
        compile.waitUntilExit()
        guard compile.terminationStatus == 0 else { throw BenchError("cc failed: \(read(work + "/cc.log"))") }
        let contender = Contender(process: try ChildProcess(path: binary, arguments: ["\(port)", "100"], outputPath: work + "/relay.log"),
                                  output: work + "/relay.log")
        try await contender.waitFor("connected")
        return contender
    }

    /// Prepares Trellis's state (7 plants with readings, 10,000 buttons, 1,000 clients, 100 of them
    /// registered online for b0) and starts `trellis run` against the broker.
    static func trellis(port: Int, work: String) async throws -> Contender {
        let state = work + "/state"
        let store = try SQLiteStore(directory: state)
        let now = Date()
        for index in 0..<7 {
            let sensor = "0x\(String(0x30 + index, radix: 16))"
            _ = try await store.addPlant(name: "Plant\(index)", sensors: [sensor], maxPlants: 7)
            try await store.recordReading(sensor: sensor, moisture: 5, temperature: 70.5, at: now)
        }
        for index in 0..<1_000 { try await store.setClientStatus(client: "c\(index)", online: true, at: now) }
        for index in 0..<10_000 { _ = try await store.recordPress(button: "b\(index)", at: now, historyLimit: 20) }
        for index in 0..<100 { _ = try await store.register(client: "c\(index)", button: "b0", at: now) }
        try await store.close()

        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("trellis").path
        let contender = Contender(process: try ChildProcess(
            path: binary,
            arguments: ["run", "--broker", "127.0.0.1:\(port)", "--state", state, "--spam-limit", "1000000000",
                        "--stats-interval", "3600", "--log-level", "warning"],
            outputPath: work + "/trellis.log"), output: work + "/trellis.log")
        try await contender.waitForOnline(port: port)
        return contender
    }

    func waitFor(_ text: String) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !Self.read(output).contains(text) {
            guard ContinuousClock.now < deadline, process.isRunning else { throw BenchError("never printed '\(text)': \(Self.read(output))") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func waitForOnline(port: Int) async throws {
        var watcher = try await LoadGenerator.connect(port: port, id: "bench-watch", replyFilters: ["trellis/status"])
        while let message = await watcher.replies.next(), message.text != "online" {}
        await watcher.client.shutdown()
    }

    func residentKiB() -> Int { Self.statusField("VmRSS", of: process.pid) }
    func peakKiB() -> Int { Self.statusField("VmHWM", of: process.pid) }

    func stop() {
        process.signal(SIGTERM)
        process.waitUntilExit()
    }

    static func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    static func statusField(_ field: String, of pid: Int32) -> Int {
        let line = read("/proc/\(pid)/status").split(separator: "\n").first { $0.hasPrefix(field + ":") }
        return line.flatMap { Int($0.split(whereSeparator: { $0 == " " || $0 == "\t" })[1]) } ?? 0
    }
}
