import Foundation
import Testing
import TrellisTestSupport

/// A real SMTP server for a test: aiosmtpd (from PyPI, in the environment
/// Tests/Notifications/setup-venv.sh makes) run by Tests/Notifications/smtp_server.py on a free
/// loopback port, with one account, writing each message it takes to a spool directory.
struct EmailServer {
    let tool: ToolProcess
    let port: Int
    let spool: String

    /// The account the server accepts.
    static let user = "bob"
    static let password = "Hunter2-correct-horse"

    /// The environment's python, made once per test run (`make test` has made it already).
    static let python: Task<String, any Error> = Task {
        let script = Repository.root.appendingPathComponent("Tests/Notifications/setup-venv.sh").path
        let output = try await ToolProcess.run([script], timeout: .seconds(600))
        let path = try #require(output.split(separator: "\n").last.map(String.init))
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw ToolError("setup-venv.sh printed no python: \(output)")
        }
        return path
    }

    /// Starts the server with `arguments` (`--cert`/`--key` for STARTTLS, `--implicit-tls`,
    /// `--auth-in-clear`, `--mechanisms LOGIN`) and waits until it answers.
    static func start(_ arguments: [String]) async throws -> EmailServer {
        let spool = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-spool-\(UUID())").path
        try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
        let login = try NotificationConfigurationTests.secret("\(user)\n\(password)\n")
        let script = Repository.root.appendingPathComponent("Tests/Notifications/smtp_server.py").path
        let tool = try ToolProcess(
            [try await python.value, script, "--spool", spool, "--login-file", login] + arguments)
        try await tool.waitFor("listening ")
        let line = try #require(tool.text.split(separator: "\n").first { $0.hasPrefix("listening ") })
        return EmailServer(tool: tool, port: try #require(Int(line.dropFirst("listening ".count))), spool: spool)
    }

    /// The login attempts the server saw: `MECHANISM USER ok|refused tls=True|False`.
    var logins: [String] {
        tool.text.split(separator: "\n").filter { $0.hasPrefix("auth ") }.map { String($0.dropFirst(5)) }
    }

    /// The messages taken so far, in order: the envelope, the parsed headers and body, and what
    /// Python's email parser found wrong.
    func messages() throws -> [[String: Any]] {
        var found: [[String: Any]] = []
        var number = 1
        while let data = FileManager.default.contents(atPath: "\(spool)/\(number).json") {
            found.append(try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any]))
            number += 1
        }
        return found
    }

    /// The raw content of message `number` (from 1).
    func raw(_ number: Int) -> [UInt8] {
        Array(FileManager.default.contents(atPath: "\(spool)/\(number).eml") ?? Data())
    }

    func stop() async throws {
        try await tool.stop()
        try? FileManager.default.removeItem(atPath: spool)
    }
}
