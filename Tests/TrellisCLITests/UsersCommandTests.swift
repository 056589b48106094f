import Foundation
import Testing

/// `trellis users add --trellis`: Trellis's own password is kept in a file only its owner can
/// read, and an account is made only once that file is written.
@Suite("users add --trellis")
struct UsersCommandTests {
    @Test("the generated password is printed and written, mode 0600, even to a bare file name")
    func writesThePasswordFile() async throws {
        let directory = temporaryDirectory()
        let result = try await TrellisBinary.run(
            ["users", "add", "relay", "--trellis", "--trellis-password-file", "relay.password"], in: directory)
        #expect(result.status == 0, "\(result.output)")
        let printed = try #require(
            result.output.components(separatedBy: "password: ").last?
                .trimmingCharacters(in: .whitespacesAndNewlines))
        let path = directory + "/relay.password"
        #expect(try String(contentsOfFile: path, encoding: .utf8) == printed + "\n")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let listed = try await TrellisBinary.run(["users", "list"], in: directory)
        #expect(listed.output.contains("relay\ttrellis"))
    }

    @Test("an existing password file is overwritten and left readable by its owner alone")
    func narrowsAnExistingFile() async throws {
        let directory = temporaryDirectory()
        let path = directory + "/relay.password"
        try "old\n".write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        let result = try await TrellisBinary.run(
            ["users", "add", "relay", "--trellis", "--password", "s3cret", "--trellis-password-file", path],
            in: directory)
        #expect(result.status == 0, "\(result.output)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "s3cret\n")
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
    }

    @Test("when the password file cannot be written, the error names it and no account is made")
    func failureLeavesNoAccount() async throws {
        let directory = temporaryDirectory()
        try "a file, not a directory".write(toFile: directory + "/taken", atomically: true, encoding: .utf8)
        let result = try await TrellisBinary.run(
            ["users", "add", "relay", "--trellis", "--trellis-password-file", "taken/relay.password"], in: directory)
        #expect(result.status != 0)
        #expect(result.output.contains("cannot write Trellis's password to taken/relay.password"))
        let listed = try await TrellisBinary.run(["users", "list"], in: directory)
        #expect(!listed.output.contains("relay"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/trellis-state/passwd"))
    }
}

/// `trellis users add --sensor`: the account may publish its own sensors' topics only.
@Suite("users add --sensor")
struct SensorAccountTests {
    @Test(
        "an address out of range or misspelled is refused with a clear line and no account is made",
        arguments: ["0x99", "36", "0x1", "0x36/x"])
    func badAddress(_ address: String) async throws {
        let directory = temporaryDirectory()
        let result = try await TrellisBinary.run(
            ["users", "add", "pi1", "--password", "pw", "--sensor", "0x36", address],
            in: directory)
        #expect(result.status != 0)
        #expect(result.output.contains("'\(address)' is not a sensor address"), "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/trellis-state/acl"))
    }

    @Test(
        "the ACL grants exactly rpi/sensors/<address> for each address, in its canonical spelling, and nothing of a device's"
    )
    func aclLines() async throws {
        let directory = temporaryDirectory()
        let result = try await TrellisBinary.run(
            ["users", "add", "pi1", "--password", "pw", "--sensor", "0X36", "0x5", "0x36"],
            in: directory)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("added pi1 (sensor 0x36 0x05)"))
        let acl = try String(contentsOfFile: directory + "/trellis-state/acl", encoding: .utf8)
        let section = acl.components(separatedBy: "# account: pi1").last ?? ""
        #expect(section.contains("topic write rpi/sensors/0x36\ntopic write rpi/sensors/0x05\n"))
        #expect(!section.contains("devices/"))
        #expect(try await TrellisBinary.run(["users", "list"], in: directory).output.contains("pi1\tsensor 0x36 0x05"))
    }
}
