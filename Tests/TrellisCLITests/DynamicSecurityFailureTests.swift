import Foundation
import Testing
import TrellisBroker
import TrellisTestSupport

/// `trellis users` with the dynamic security backend when it cannot do its work: one clear line
/// saying what to check, never the administration password, and no crash.
@Suite("users with dynamic security: failures")
struct DynamicSecurityFailureTests {
    static let secret = "admin-secret-value"

    /// A directory whose administration password file holds `secret`.
    static func directory() throws -> String {
        let directory = temporaryDirectory()
        try (secret + "\n").write(toFile: directory + "/admin.password", atomically: true, encoding: .utf8)
        return directory
    }

    static func list(_ directory: String, broker: String) async throws -> (status: Int32, output: String) {
        try await TrellisBinary.run(
            [
                "users", "list", "--broker", broker, "--timeout", "3",
                "--admin-password-file", "admin.password"
            ], in: directory)
    }

    @Test("no administration password file: dynamic security asked for, the file named")
    func noPasswordFile() async throws {
        let directory = temporaryDirectory()
        let result = try await TrellisBinary.run(["users", "list", "--backend", "dynamic-security"], in: directory)
        #expect(result.status != 0)
        #expect(
            result.output.contains("cannot read the password of trellis-admin from trellis-state/admin.password"),
            "\(result.output)")
    }

    @Test("no broker listening")
    func unreachable() async throws {
        let directory = try Self.directory()
        let port = try #require(PortProbe.freeLoopbackPort())
        let result = try await Self.list(directory, broker: "127.0.0.1:\(port)")
        #expect(result.status != 0)
        #expect(result.output.contains("cannot reach the broker at 127.0.0.1:\(port)"), "\(result.output)")
        #expect(!result.output.contains(Self.secret))
    }

    @Test("a broker of the file-based profile refuses the administration account")
    func refusedLogin() async throws {
        let directory = try Self.directory()
        try "".write(toFile: directory + "/passwd", atomically: true, encoding: .utf8)
        try await withTestBroker(anonymous: false, extraConfig: ["password_file \(directory)/passwd"]) { broker in
            let result = try await Self.list(directory, broker: broker.address)
            #expect(result.status != 0)
            #expect(result.output.contains("refused the login of trellis-admin"), "\(result.output)")
            #expect(!result.output.contains(Self.secret))
        }
    }

    @Test("a broker without the plugin never answers")
    func noPlugin() async throws {
        let directory = try Self.directory()
        try await withTestBroker { broker in
            let result = try await Self.list(directory, broker: broker.address)
            #expect(result.status != 0)
            #expect(result.output.contains("is the dynamic security plugin loaded"), "\(result.output)")
            #expect(!result.output.contains(Self.secret))
        }
    }

    @Test(
        "bad options are refused before anything is tried",
        arguments: [
            (["--broker", "127.0.0.1:99999"], "is not HOST:PORT"),
            (["--timeout", "0"], "--timeout must be between"),
            (["--backend", "ldap"], "ldap")
        ])
    func badOptions(_ options: [String], _ expected: String) async throws {
        let result = try await TrellisBinary.run(["users", "list"] + options, in: temporaryDirectory())
        #expect(result.status != 0)
        #expect(result.output.contains(expected), "\(result.output)")
    }
}
