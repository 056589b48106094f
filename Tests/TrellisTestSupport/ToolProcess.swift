import Foundation
import Synchronization

/// A real tool (tcpdump, mosquitto, mosquitto_pub, tshark) run for a test, its output kept and
/// waited on as it arrives: a test waits for a line the tool prints, or for its exit, never for
/// a fixed time.
public final class ToolProcess: Sendable {
    private let process: Process
    private let output = Mutex(Data())
    private let exited = Mutex<Int32?>(nil)
    public let command: String

    /// Starts `arguments[0]` (a path) with the rest as its arguments; stdout and stderr are merged
    /// unless `discardErrors`, which keeps stdout alone.
    public init(_ arguments: [String], discardErrors: Bool = false) throws {
        command = arguments.joined(separator: " ")
        process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = discardErrors ? FileHandle.nullDevice : pipe
        process.standardInput = FileHandle.nullDevice
        let output = self.output
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            if chunk.isEmpty { handle.readabilityHandler = nil } else { output.withLock { $0.append(chunk) } }
        }
        let exited = self.exited
        process.terminationHandler = { finished in exited.withLock { $0 = finished.terminationStatus } }
        try process.run()
    }

    /// What it printed so far.
    public var text: String { output.withLock { String(decoding: $0, as: UTF8.self) } }

    /// Waits until it printed `needle`; throws if it exits first or after `timeout`.
    public func waitFor(_ needle: String, timeout: Duration = .seconds(30)) async throws {
        try await eventually("\(command) printed \"\(needle)\" (it printed: \(text))", timeout: timeout) {
            if text.contains(needle) { return true }
            if let status = exited.withLock({ $0 }) {
                throw ToolError("\(command) exited with \(status) before printing \"\(needle)\": \(text)")
            }
            return false
        }
    }

    /// Waits for its exit and returns the status.
    @discardableResult
    public func waitForExit(timeout: Duration = .seconds(60)) async throws -> Int32 {
        try await eventually("\(command) exited", timeout: timeout) { exited.withLock { $0 } != nil }
        return exited.withLock { $0 }!
    }

    /// Sends `signal` (SIGINT flushes tcpdump's file) and waits for the exit.
    public func stop(_ signal: Int32 = SIGINT) async throws {
        if process.isRunning { kill(process.processIdentifier, signal) }
        try await waitForExit()
    }

    /// Runs a tool to its end and returns its output; throws when it fails.
    public static func run(_ arguments: [String], discardErrors: Bool = false, timeout: Duration = .seconds(60)) async throws -> String {
        let tool = try ToolProcess(arguments, discardErrors: discardErrors)
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
    public static let canUseNamespaces = canCapture && ToolProcess.find("ip") != nil
}
