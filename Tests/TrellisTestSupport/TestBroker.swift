import Foundation
import TrellisBroker

/// A real Mosquitto for one test: a free loopback port, a temporary configuration and
/// persistence directory, and its log kept for inspection. Stop it with `stop()`.
public final class TestBroker: @unchecked Sendable {
    /// Where the broker listens.
    public let host = "127.0.0.1"
    public let port: Int
    /// The temporary directory holding config, persistence and log.
    public let directory: URL
    public var configPath: String { directory.appendingPathComponent("mosquitto.conf").path }
    public var logPath: String { directory.appendingPathComponent("mosquitto.log").path }
    private var process: MosquittoProcess?

    /// Starts a broker. `extraConfig` lines are appended to the generated configuration.
    /// `anonymous: false` refuses clients without credentials (add `password_file` to `extraConfig`);
    /// `persistent: false` keeps nothing on disk (for a broker no test restarts).
    public static func start(
        anonymous: Bool = true, persistent: Bool = true, extraConfig: [String] = []
    ) async throws -> TestBroker {
        var lastError: (any Error)?
        for _ in 0..<5 {
            guard let port = PortProbe.freeLoopbackPort() else { continue }
            let broker = try TestBroker(
                port: port, anonymous: anonymous, persistent: persistent, extraConfig: extraConfig)
            do {
                try await broker.restart()
                return broker
            } catch {
                lastError = error
            }
        }
        throw lastError ?? CocoaError(.fileNoSuchFile)
    }

    private init(port: Int, anonymous: Bool, persistent: Bool, extraConfig: [String]) throws {
        self.port = port
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-broker-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let lines =
            [
                "listener \(port) 127.0.0.1",
                "allow_anonymous \(anonymous)",
                "user root", // stay the test's user, so the broker can write its persistence directory
                "set_tcp_nodelay true",
                "persistence \(persistent)",
                "persistence_location \(directory.path)/",
                "autosave_interval 1",
                "max_queued_messages 100000",
                "max_inflight_messages 0",
                "log_dest stderr",
                "log_type error",
                "log_type warning",
                "log_type notice"
            ] + extraConfig
        try lines.joined(separator: "\n").appending("\n").write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// The broker's address as `HOST:PORT`.
    public var address: String { "\(host):\(port)" }

    /// Starts (or starts again, on the same port) the broker and waits until every listener accepts
    /// connections.
    ///
    /// Between a kill and the restart another test's connection may take one of the freed ports as
    /// its local port for a moment; the broker then exits with "Address already in use", and is
    /// started again until `timeout`.
    public func restart(timeout: Duration = .seconds(20)) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            ProcessCensus.started("mosquitto")
            let process = try MosquittoProcess(configPath: configPath, logPath: logPath)
            do {
                try await process.start()
                self.process = process
                return
            } catch let MosquittoProcess.StartError.exitedEarly(_, output)
                where output.contains("Address already in use") && ContinuousClock.now < deadline
            {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Kills the broker with SIGKILL, as a crash would.
    public func kill() {
        process?.kill()
        process = nil
    }

    /// Stops the broker with SIGSTOP and returns once the kernel reports it stopped (a signal is
    /// taken at the process's next scheduling point): from then it reads nothing, while the kernel
    /// still takes connections and bytes for it.
    public func pause() async throws {
        guard let pid = process?.pid else { return }
        Foundation.kill(pid, SIGSTOP)
        try await eventually("the broker is stopped", timeout: .seconds(10)) {
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            // The state follows the parenthesised command name.
            return stat.split(separator: ")").last?.split(separator: " ").first == "T"
        }
    }

    /// Lets a paused broker run again (SIGCONT).
    public func resume() {
        if let pid = process?.pid { Foundation.kill(pid, SIGCONT) }
    }

    /// The bytes clients sent that the broker has not read yet, summed over its connections, from
    /// the kernel's socket table (`/proc/net/tcp`, the receive queue of each socket on its port).
    public func unreadBytes() -> Int {
        TCPSocketTable(path: "/proc/net/tcp")?.sockets(onPort: port).reduce(0) { $0 + $1.unreadBytes } ?? 0
    }

    /// Stops the broker as its service manager would (SIGTERM, waited for): it saves its state
    /// (sessions, queued messages) on the way out, and ``restart(timeout:)`` finds it again.
    public func stopKeepingState() async {
        await process?.stop()
        process = nil
    }

    /// Stops the broker and removes its directory.
    public func stop() async {
        await process?.stop()
        process = nil
        try? FileManager.default.removeItem(at: directory)
    }

    /// Waits until the broker has saved its state (sessions, subscriptions, retained messages)
    /// to `mosquitto.db` after `moment`; it autosaves every second.
    public func waitForPersistence(after moment: Date = Date(), timeout: Duration = .seconds(10)) async throws {
        let path = directory.appendingPathComponent("mosquitto.db").path
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let saved = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? nil
            if let saved, saved > moment { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TimeoutError(message: "the broker did not save its state within \(timeout)")
    }

    /// The broker's log so far.
    public func log() -> String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }
}

/// Runs `body` with a fresh broker and stops the broker afterwards, whether `body` throws or not.
public func withTestBroker<T>(
    anonymous: Bool = true,
    extraConfig: [String] = [],
    _ body: (TestBroker) async throws -> T
) async throws -> T {
    let broker = try await TestBroker.start(anonymous: anonymous, extraConfig: extraConfig)
    return try await withTearDown(of: broker, { await $0.stop() }, body)
}
