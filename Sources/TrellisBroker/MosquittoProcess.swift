import Foundation
import Logging

/// A Mosquitto broker run as a child process: started from a configuration file, watched until
/// each of the file's listeners accepts connections, and stopped (TERM, then KILL) so that no broker
/// is left behind.
public final class MosquittoProcess: @unchecked Sendable {
    /// Why a broker could not be started, each with one sentence saying what to do.
    public enum StartError: Error, CustomStringConvertible, Sendable {
        case binaryNotFound
        /// `TRELLIS_MOSQUITTO` names a file that is not an executable.
        case chosenBinaryUnusable(path: String)
        case configUnreadable(path: String, reason: String)
        case portInUse(BrokerAddress)
        case exitedEarly(status: Int32, output: String)
        /// The listener at this address did not open in time (the broker may still be running).
        case notListening(BrokerAddress)

        public var description: String {
            switch self {
            case .binaryNotFound:
                return
                    "mosquitto is not installed (no 'mosquitto' on PATH or in /usr/sbin): install it with 'apt-get install -y mosquitto', or run 'make run'"
            case let .chosenBinaryUnusable(path):
                return
                    "TRELLIS_MOSQUITTO names \(path), which is not an executable file: correct it, or unset it to use the mosquitto on PATH or in /usr/sbin"
            case let .configUnreadable(path, reason):
                return
                    "cannot read the broker configuration \(path): \(reason); pass another file with --broker-config FILE"
            case let .portInUse(address):
                return
                    "\(address) is already in use by another program: stop it, or use the broker there with 'trellis run --broker \(address)'"
            case let .exitedEarly(status, output):
                let detail = output.split(separator: "\n").suffix(3).joined(separator: " | ")
                return "mosquitto exited at start with status \(status): \(detail.isEmpty ? "no output" : detail)"
            case let .notListening(address):
                return
                    "mosquitto started but did not accept connections on \(address) within the time allowed; check the listener in its configuration"
            }
        }
    }

    /// The configuration file the broker runs with.
    public let configPath: String
    /// Where the broker is expected to listen (the first `listener` of the file).
    public let address: BrokerAddress
    /// The TCP listeners of the file that can be probed from here, the first one first (see
    /// ``listeners(in:)``); `start` waits for all of them.
    public let listeners: [BrokerAddress]
    private let logPath: String?
    private let logger: Logger
    private let lock = NSLock()
    private var process: ChildProcess?

    /// Prepares a broker for `configPath`; `logPath` receives its output (inherited when nil).
    public init(configPath: String, logPath: String? = nil, logger: Logger = Logger(label: "trellis.broker")) throws {
        guard FileManager.default.isReadableFile(atPath: configPath),
            let text = try? String(contentsOfFile: configPath, encoding: .utf8)
        else {
            let reason = FileManager.default.fileExists(atPath: configPath) ? "permission denied" : "no such file"
            throw StartError.configUnreadable(path: configPath, reason: reason)
        }
        self.configPath = configPath
        self.listeners = Self.listeners(in: text)
        self.address = listeners[0]
        self.logPath = logPath
        self.logger = logger
    }

    /// The TCP listeners of a configuration as this machine reaches them, in file order, or
    /// Mosquitto's default of 1883 on loopback when there is none.
    ///
    /// The first is where Trellis connects, and is always kept. A later one is kept only when a
    /// connection from here can tell that it is open: not when it is bound by host name (only
    /// addresses are probed) or to one interface (`bind_interface`, which loopback does not reach).
    /// A listener on every address is probed on 127.0.0.1, or on ::1 with `socket_domain ipv6`. A
    /// Unix socket listener (port 0) has no TCP address.
    static func listeners(in config: String) -> [BrokerAddress] {
        struct Listener {
            var address: BrokerAddress
            var everyAddress: Bool
            var boundToInterface = false
        }
        var found: [Listener] = []
        var inTCPListener = false
        for line in config.split(separator: "\n") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let keyword = words.first else { continue }
            if keyword == "listener" {
                inTCPListener = false
                guard words.count >= 2, let port = Int(words[1]), port > 0 else { continue }
                let host = words.count >= 3 ? String(words[2]) : "0.0.0.0"
                let probed = host == "0.0.0.0" ? "127.0.0.1" : (host == "::" ? "::1" : host)
                found.append(Listener(address: BrokerAddress(host: probed, port: port), everyAddress: words.count < 3))
                inTCPListener = true
            } else if inTCPListener, keyword == "bind_interface" {
                found[found.count - 1].boundToInterface = true
            } else if inTCPListener, keyword == "socket_domain", words.count >= 2, words[1] == "ipv6",
                found[found.count - 1].everyAddress
            {
                found[found.count - 1].address.host = "::1"
            }
        }
        guard let first = found.first else { return [BrokerAddress(host: "127.0.0.1", port: 1883)] }
        let later = found.dropFirst().filter { !$0.boundToInterface && PortProbe.isAddress($0.address.host) }
        return [first.address] + later.map(\.address)
    }

    /// Locates the mosquitto binary on PATH or in the Debian location (/usr/sbin).
    /// `TRELLIS_MOSQUITTO`, when set, names the binary and nothing else is tried.
    public static func findBinary() -> String? {
        try? binary(environment: ProcessInfo.processInfo.environment)
    }

    /// The mosquitto binary `environment` chooses: `TRELLIS_MOSQUITTO` when set (it must be an
    /// executable file), else the first on `PATH`, in /usr/sbin or in /usr/local/sbin.
    public static func binary(environment: [String: String]) throws(StartError) -> String {
        if let chosen = environment["TRELLIS_MOSQUITTO"] {
            guard FileManager.default.isExecutableFile(atPath: chosen) else {
                throw StartError.chosenBinaryUnusable(path: chosen)
            }
            return chosen
        }
        let path = environment["PATH"] ?? ""
        let candidates =
            path.split(separator: ":").map { "\($0)/mosquitto" } + ["/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw StartError.binaryNotFound
        }
        return found
    }

    /// Starts the broker and waits until every listener accepts connections. Mosquitto opens its
    /// listeners one after the other and exits when one cannot be opened, so the first one accepting
    /// is not enough: the broker could still exit on a later one.
    public func start(timeout: Duration = .seconds(10)) async throws {
        let binary = try Self.binary(environment: ProcessInfo.processInfo.environment)
        if let taken = listeners.first(where: { PortProbe.isAccepting(host: $0.host, port: $0.port) }) {
            throw StartError.portInUse(taken)
        }
        let capturePath = logPath ?? FileManagerTemporary.path(for: "mosquitto-start")
        // The log is appended to across starts; a failure reports what this start wrote.
        let earlier = (try? FileManager.default.attributesOfItem(atPath: capturePath)[.size] as? Int) ?? 0
        let child = try ChildProcess(path: binary, arguments: ["-c", configPath], outputPath: capturePath)
        lock.withLock { process = child }
        logger.info("started mosquitto", metadata: ["pid": "\(child.pid)", "config": "\(configPath)"])

        let deadline = ContinuousClock.now + timeout
        var waiting = listeners[...]
        while let next = waiting.first {
            if !child.isRunning {
                let written = (FileManager.default.contents(atPath: capturePath) ?? Data()).dropFirst(earlier)
                let output = String(decoding: written, as: UTF8.self)
                lock.withLock { process = nil }
                throw StartError.exitedEarly(status: child.terminationStatus, output: output)
            }
            // Accepting, and by this broker: not a neighbour that took the port first while this one is
            // about to exit for it.
            if PortProbe.isAccepting(host: next.host, port: next.port),
                ListeningSockets.process(child.pid, listensOn: next.port) ?? true
            {
                waiting = waiting.dropFirst()
                continue
            }
            guard ContinuousClock.now < deadline else {
                await stop()
                throw StartError.notListening(next)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The broker's process id while it runs.
    public var pid: Int32? { lock.withLock { process?.isRunning == true ? process?.pid : nil } }

    /// Stops the broker: SIGTERM, then SIGKILL after `grace`. Safe to call twice.
    public func stop(grace: Duration = .seconds(5)) async {
        guard
            let child = lock.withLock({
                defer { process = nil }; return process
            })
        else { return }
        guard child.isRunning else { return }
        child.signal(SIGTERM)
        let deadline = ContinuousClock.now + grace
        while child.isRunning && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        if child.isRunning {
            child.signal(SIGKILL)
            child.waitUntilExit()
        }
        logger.info("stopped mosquitto", metadata: ["pid": "\(child.pid)"])
    }

    /// Kills the broker at once with SIGKILL, as a crash would (used by fault tests).
    public func kill() {
        guard
            let child = lock.withLock({
                defer { process = nil }; return process
            }), child.isRunning
        else { return }
        child.signal(SIGKILL)
        child.waitUntilExit()
    }
}

/// Scratch files for output that is only read when something goes wrong.
enum FileManagerTemporary {
    static func path(for name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString).log").path
    }
}
