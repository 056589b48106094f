import Foundation
import Testing
import TrellisMQTT
import TrellisTestSupport
import TrellisApplication
@testable import trellis

/// `trellis users add` and `passwd` (files backend) put no password on any command line — they hash in-process
/// and start no `mosquitto_passwd` (a wrapper first on PATH would write its arguments down) — and the entries
/// they write log in to a real Mosquitto, whatever the password holds (a `:`, blanks, letters beyond ASCII,
/// which `mosquitto_passwd -U` would cut or trim). The first test runs the binary end to end; the others run
/// what the commands decide in-process.
@Suite("Passwords on no command line")
struct PasswordArgumentsTests {
    static let realTool = ["/usr/bin/mosquitto_passwd", "/usr/local/bin/mosquitto_passwd", "/usr/sbin/mosquitto_passwd"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// A directory with the recording `mosquitto_passwd`, its log, and the environment that finds it first.
    struct Recorder {
        let directory = temporaryDirectory()
        var log: String { directory + "/argv.log" }
        var environment: [String: String] {
            var environment = ProcessInfo.processInfo.environment
            environment["PATH"] = directory + "/bin:" + (environment["PATH"] ?? "/usr/bin:/bin")
            return environment
        }

        init(tool: String) throws {
            try FileManager.default.createDirectory(atPath: directory + "/bin", withIntermediateDirectories: true)
            let script = "#!/bin/sh\nprintf '%s\\n' \"$0 $*\" >> '\(directory)/argv.log'\nexec '\(tool)' \"$@\"\n"
            try script.write(toFile: directory + "/bin/mosquitto_passwd", atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes(
                [.posixPermissions: 0o755], ofItemAtPath: directory + "/bin/mosquitto_passwd")
        }

        /// `trellis users ARGUMENTS` with the password on standard input, read from a file of the test's.
        func users(_ arguments: [String], stdin secret: String? = nil) async throws -> (status: Int32, output: String) {
            let files = ["--password-file", directory + "/passwd", "--acl-file", directory + "/acl"]
            guard let secret else {
                return try await TrellisBinary.run(
                    ["users"] + arguments + files, in: directory, environment: environment)
            }
            let input = directory + "/stdin-\(UUID().uuidString)"
            try (secret + "\n").write(toFile: input, atomically: true, encoding: .utf8)
            return try await TrellisBinary.run(
                ["-c", #"exec "$0" "$@" < "$TRELLIS_TEST_STDIN""#, TrellisBinary.path, "users"] + arguments + files
                    + ["--password-stdin"],
                in: directory, environment: environment.merging(["TRELLIS_TEST_STDIN": input]) { $1 },
                executable: "/bin/sh")
        }
    }

    @Test(
        "add and passwd start no mosquitto_passwd; the written entries log in, a ':' and blanks kept, the old one no more",
        .enabled(if: realTool != nil, "mosquitto_passwd is not installed"))
    func noPasswordInArguments() async throws {
        let recorder = try Recorder(tool: try #require(Self.realTool))
        // `mosquitto_passwd -U` would store `first` as the hash of "fi" and `second` without its last blank.
        let first = "fi:rst-\(UUID().uuidString.prefix(8))"
        let second = "sëcond \(UUID().uuidString.prefix(8)) "
        let added = try await recorder.users(["add", "alice"], stdin: first)
        #expect(added.status == 0, "\(added.output)")
        #expect(!added.output.contains(first))
        let generated = try await recorder.users(["add", "bob"])
        #expect(generated.status == 0, "\(generated.output)")
        let bobPassword = try #require(
            generated.output.components(separatedBy: "password: ").last?
                .trimmingCharacters(in: .whitespacesAndNewlines))
        let changed = try await recorder.users(["passwd", "alice"], stdin: second)
        #expect(changed.status == 0, "\(changed.output)")

        let argv = (try? String(contentsOfFile: recorder.log, encoding: .utf8)) ?? ""
        #expect(argv.isEmpty, "no mosquitto_passwd is started: \(argv)")
        let entries = try String(contentsOfFile: recorder.directory + "/passwd", encoding: .utf8)
        #expect(
            entries.split(separator: "\n").map { $0.split(separator: ":").first.map(String.init) } == ["alice", "bob"])
        #expect(entries.split(separator: "\n").allSatisfy { $0.contains(":$7$") }, "\(entries)")
        #expect(
            try FileManager.default.attributesOfItem(atPath: recorder.directory + "/passwd")[.posixPermissions] as? Int
                == 0o600)

        try await withTestBroker(anonymous: false, extraConfig: ["password_file \(recorder.directory)/passwd"]) {
            broker in
            for (name, password, accepted) in [
                ("alice", second, true), ("bob", bobPassword, true), ("alice", first, false),
                ("alice", String(second.dropLast()), false)
            ] {
                let client = try MQTTClient(
                    configuration: MQTTConfiguration(
                        host: broker.host, port: broker.port, clientID: "login-\(name)", username: name,
                        password: password,
                        reconnectDelay: 0.2...0.2))
                client.start()
                if accepted {
                    try await client.waitUntilConnected(timeout: .seconds(10))
                } else {
                    await #expect(throws: MQTTError.self) { try await client.waitUntilConnected(timeout: .seconds(2)) }
                }
                await client.shutdown()
            }
        }
    }

    @Test("an existing password file keeps its other lines, its comments and its mode; remove takes one line out")
    func keepsTheFile() async throws {
        let directory = temporaryDirectory()
        let path = directory + "/passwd"
        try "# kept\nother:$7$101$c2FsdA==$aGFzaA==\n".write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
        let store = FileAccounts(passwordFile: path, aclFile: directory + "/acl")
        try await store.set("carol", role: .client, sensors: [], password: "pw-carol")
        var text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasPrefix("# kept\nother:$7$101$c2FsdA==$aGFzaA==\ncarol:$7$"), "\(text)")
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o640)
        try await store.remove("carol")
        text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text == "# kept\nother:$7$101$c2FsdA==$aGFzaA==\n")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory).allSatisfy { !$0.contains(".trellis-") })
    }

    @Test("--password and --password-stdin together, an empty standard input and a line break are refused")
    func refusals() async throws {
        /// The message `users add ARGUMENTS` is refused with, before it runs.
        func refusal(_ arguments: [String]) -> String {
            do {
                _ = try UsersCommand.Add.parse(["dave"] + arguments)
                return "taken"
            } catch {
                return UsersCommand.Add.message(for: error)
            }
        }
        let both = refusal(["--password", "x", "--password-stdin"])
        #expect(both.contains("give --password or --password-stdin, not both"), "\(both)")
        let broken = refusal(["--password", "a\nb"])
        #expect(broken.contains("may not contain a line break"), "\(broken)")
        let input = try UsersCommand.PasswordInput.parse(["--password-stdin"])
        for line in ["", nil] {
            let empty = #expect(throws: CommandFailure.self) { try input.resolve(input: { line }) }
            #expect(empty?.description.contains("standard input held no password") == true)
        }
        #expect(try input.resolve(input: { "pw\r" }).secret == "pw", "a CR LF line ends before its CR")
        // A password with a line break is refused by the password file too.
        #expect(throws: CommandFailure.self) {
            try PasswordFile(path: temporaryDirectory() + "/passwd").set("dave", password: "a\nb")
        }
    }
}
