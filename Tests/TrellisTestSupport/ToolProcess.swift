import Foundation
import Synchronization
import TrellisBroker

/// A real tool (tcpdump, mosquitto, mosquitto_pub, tshark) run for a test, its output (stdout and
/// stderr) kept in a file and waited on as it arrives: a test waits for a line the tool prints, or
/// for its exit, never for a fixed time.
///
/// It is started as a ``ChildProcess``, with every signal unblocked and reset to its default, so
/// SIGINT reaches tcpdump even though the test process blocks signals.
public final class ToolProcess: Sendable {
    private let child: Mutex<ChildProcess>
    private let outputPath: String
    public let command: String

    /// Starts `arguments[0]` (a path) with the rest as its arguments.
    public init(_ arguments: [String]) throws {
        command = arguments.joined(separator: " ")
        outputPath =
            FileManager.default.temporaryDirectory.appendingPathComponent("trellis-tool-\(UUID().uuidString).log").path
        ProcessCensus.started(arguments[0].hasSuffix("trellis") ? "trellis" : "tool:" + arguments[0])
        child = Mutex(
            try ChildProcess(path: arguments[0], arguments: Array(arguments.dropFirst()), outputPath: outputPath))
    }

    deinit {
        try? FileManager.default.removeItem(atPath: outputPath)
    }

    /// What it printed so far.
    public var text: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// Its exit status once it has exited, nil while it runs.
    public var exitStatus: Int32? {
        child.withLock { $0.isRunning ? nil : $0.terminationStatus }
    }

    /// Waits until it printed `needle`; throws if it exits first or after `timeout`.
    public func waitFor(_ needle: String, timeout: Duration = .seconds(30)) async throws {
        try await eventually("\(command) printed \"\(needle)\" (it printed: \(text))", timeout: timeout) {
            if text.contains(needle) { return true }
            if let status = exitStatus {
                if text.contains(needle) { return true }
                throw ToolError("\(command) exited with \(status) before printing \"\(needle)\": \(text)")
            }
            return false
        }
    }

    /// Waits for its exit and returns the status.
    @discardableResult
    public func waitForExit(timeout: Duration = .seconds(60)) async throws -> Int32 {
        try await eventually("\(command) exited (it printed: \(text))", timeout: timeout) { exitStatus != nil }
        return exitStatus!
    }

    /// Sends `signal` (SIGINT makes tcpdump flush its file and exit) and waits for the exit.
    public func stop(_ signal: Int32 = SIGINT) async throws {
        child.withLock { $0.signal(signal) }
        try await waitForExit()
    }

    /// Runs a tool to its end and returns its output; throws when it fails.
    public static func run(_ arguments: [String], timeout: Duration = .seconds(60)) async throws -> String {
        let tool = try ToolProcess(arguments)
        let status = try await tool.waitForExit(timeout: timeout)
        guard status == 0 else { throw ToolError("\(tool.command) exited with \(status): \(tool.text)") }
        return tool.text
    }

    /// The path of `name` in the usual directories, or nil when it is not installed.
    public static func find(_ name: String) -> String? {
        ["/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/local/bin"].map { "\($0)/\(name)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

public struct ToolError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Whether live captures can run here: tcpdump installed and the right to capture (root, which
/// holds CAP_NET_RAW; `make test` and CI run as root).
public enum CaptureAbility {
    public static let tcpdump = ToolProcess.find("tcpdump")
    public static let tshark = ToolProcess.find("tshark")
    public static let canCapture = tcpdump != nil && geteuid() == 0
    public static let canUseNamespaces =
        canCapture && ToolProcess.find("ip") != nil && ToolProcess.find("ethtool") != nil
}
