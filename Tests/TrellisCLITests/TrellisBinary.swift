import Foundation
import TrellisBroker
import TrellisTestSupport

/// The built `trellis` executable, run as a child process the way a user runs it.
struct TrellisBinary {
    /// `trellis` sits beside the test bundle in the build directory.
    static var path: String {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("trellis").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return "trellis"
    }

    let process: ChildProcess
    let outputPath: String

    /// Starts `trellis` with `arguments` in `directory`.
    static func start(
        _ arguments: [String], in directory: String? = nil,
        environment: [String: String]? = nil, executable: String = path
    ) throws -> TrellisBinary {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent(
            "trellis-out-\(UUID().uuidString).log"
        ).path
        var env = environment ?? ProcessInfo.processInfo.environment
        env["NO_COLOR"] = "1"
        ProcessCensus.started("trellis")
        let process = try ChildProcess(
            path: executable, arguments: arguments, outputPath: output, environment: env,
            workingDirectory: directory)
        return TrellisBinary(process: process, outputPath: output)
    }

    /// Starts `trellis` with `arguments(ports)` for `count` free loopback ports it listens on, and waits
    /// until it printed every line of `ready(ports)`. Another process may take a port between the probe and
    /// trellis's bind (the suites run in parallel); a start that fails with "already in use" (trellis's own
    /// check of a port, or the bind's "Address already in use") is tried again on other ports, up to 5 times.
    static func startListening(
        ports count: Int = 1, _ arguments: ([Int]) throws -> [String], ready: ([Int]) -> [String],
        in directory: String? = nil,
        environment: [String: String]? = nil, timeout: Duration = .seconds(30)
    ) async throws -> (trellis: TrellisBinary, ports: [Int]) {
        var attempt = 0
        while true {
            attempt += 1
            var ports: [Int] = []
            while ports.count < count {
                guard let port = PortProbe.freeLoopbackPort() else {
                    throw TimeoutError(message: "no free loopback port")
                }
                if !ports.contains(port) { ports.append(port) }
            }
            let trellis = try start(try arguments(ports), in: directory, environment: environment)
            do {
                for line in ready(ports) { try await trellis.waitForOutput(line, timeout: timeout) }
                return (trellis, ports)
            } catch {
                guard attempt < 5, trellis.output.contains("already in use") else { throw error }
                trellis.process.signal(SIGKILL)
                trellis.process.waitUntilExit()
            }
        }
    }

    /// Starts `trellis run` owning its broker: Mosquitto from the embedded configuration on a free loopback
    /// port (written to `directory/broker.conf`), the state in `directory/state`, `more` as further arguments;
    /// returns once it printed `ready`. A port taken between the probe and the broker's start is tried again
    /// on another, as ``startListening(ports:_:ready:in:environment:timeout:)`` does.
    static func startOwningBroker(
        in directory: String, _ more: [String] = [], ready: String = "connected to the broker"
    ) async throws -> (trellis: TrellisBinary, config: String, port: Int) {
        let (trellis, ports) = try await startListening(
            { ports in
                [
                    "run", "--broker-config", try brokerConfig(port: ports[0], in: directory), "--state",
                    directory + "/state"
                ]
                    + more
            }, ready: { _ in [ready] }, in: directory, timeout: .seconds(60))
        return (trellis, directory + "/broker.conf", ports[0])
    }

    /// Runs `trellis` to completion and returns its exit status and output.
    static func run(
        _ arguments: [String], in directory: String? = nil, environment: [String: String]? = nil,
        timeout: Duration = .seconds(60), executable: String = path
    ) async throws -> (status: Int32, output: String) {
        let binary = try start(arguments, in: directory, environment: environment, executable: executable)
        let status = try await binary.waitForExit(timeout: timeout)
        return (status, binary.output)
    }

    /// Everything it printed so far (standard output and error).
    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// Waits for the process to exit and returns its status; throws after `timeout`.
    func waitForExit(timeout: Duration = .seconds(30)) async throws -> Int32 {
        try await process.waitForExit(timeout: timeout) { "trellis did not exit within \(timeout); output: \(output)" }
    }

    /// Ends it the way a service manager does (SIGTERM) and returns its exit status; throws after `timeout`.
    func terminate(timeout: Duration = .seconds(30)) async throws -> Int32 {
        process.signal(SIGTERM)
        return try await waitForExit(timeout: timeout)
    }

    /// Waits until the output contains `text`.
    func waitForOutput(_ text: String, timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !output.contains(text) {
            guard ContinuousClock.now < deadline, process.isRunning else {
                throw TimeoutError(message: "trellis never printed '\(text)'; output: \(output)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

extension ChildProcess {
    /// Waits for the process to exit, looking every 20 ms, and returns its status; after `timeout`
    /// kills it and throws a ``TimeoutError`` with the message `failure` gives then.
    func waitForExit(timeout: Duration, failure: () -> String) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while isRunning {
            guard ContinuousClock.now < deadline else {
                signal(SIGKILL)
                waitUntilExit()
                throw TimeoutError(message: failure())
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return terminationStatus
    }
}
