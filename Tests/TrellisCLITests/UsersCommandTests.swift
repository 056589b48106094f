import Foundation
import Testing
import TrellisApplication
import TrellisBroker
@testable import trellis

/// `trellis users add --trellis`: Trellis's own password is kept in a file only its owner can
/// read, and an account is made only once that file is written. What the command decides is run
/// here in-process (`AccountChanges`, `writeSecret`, the files backend); `PasswordArgumentsTests`
/// runs the binary itself against a real broker.
@Suite("users add --trellis")
struct UsersCommandTests {
    /// The files backend in a fresh directory.
    static func files(in directory: String) -> FileAccounts {
        FileAccounts(passwordFile: directory + "/trellis-state/passwd", aclFile: directory + "/trellis-state/acl")
    }

    /// The mode bits of the file at `path`.
    static func mode(_ path: String) throws -> Int? {
        try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
    }

    @Test("the generated password is written, mode 0600, even to a bare file name, and the account listed")
    func writesThePasswordFile() async throws {
        let directory = temporaryDirectory()
        let add = try UsersCommand.Add.parse(["relay", "--trellis", "--trellis-password-file", "relay.password"])
        #expect(add.role == .trellis && add.trellisPasswordFile == "relay.password")
        let (secret, generated) = try add.passwordInput.resolve()
        #expect(generated && secret.count == 20, "a random password, printed once")
        // A bare file name goes in the current directory: its parent is ".", which is there.
        try createParentDirectory(of: "relay.password")
        let path = directory + "/relay.password"
        try await AccountChanges.add(
            "relay", role: add.role, sensors: [], password: secret, trellisPasswordFile: path,
            in: Self.files(in: directory))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == secret + "\n")
        #expect(try Self.mode(path) == 0o600)
        #expect(try await Self.files(in: directory).list().map { "\($0.name)\t\($0.role)" } == ["relay\ttrellis"])
    }

    @Test("an existing password file is overwritten and left readable by its owner alone")
    func narrowsAnExistingFile() throws {
        let path = temporaryDirectory() + "/relay.password"
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try "old\n".write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        try writeSecret("s3cret", to: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "s3cret\n")
        #expect(try Self.mode(path) == 0o600)
    }

    @Test("when the password file cannot be written, the error names it and no account is made")
    func failureLeavesNoAccount() async throws {
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "a file, not a directory".write(toFile: directory + "/taken", atomically: true, encoding: .utf8)
        let store = Self.files(in: directory)
        let error = await #expect(throws: CommandFailure.self) {
            try await AccountChanges.add(
                "relay", role: .trellis, sensors: [], password: "pw",
                trellisPasswordFile: directory + "/taken/relay.password", in: store)
        }
        #expect(
            error?.description.contains("cannot write Trellis's password to \(directory)/taken/relay.password") == true)
        #expect(try await store.list().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory + "/trellis-state/passwd"))
    }
}

/// `trellis users add --sensor`: the account may publish its own sensors' topics only.
@Suite("users add --sensor")
struct SensorAccountTests {
    @Test(
        "an address out of range or misspelled is refused with a clear line before anything runs",
        arguments: ["0x99", "36", "0x1", "0x36/x"])
    func badAddress(_ address: String) throws {
        #expect(AccountChanges.sensorAddresses([address]).isEmpty)
        do {
            _ = try UsersCommand.Add.parse(["pi1", "--password", "pw", "--sensor", "0x36", address])
            Issue.record("'\(address)' was taken")
        } catch {
            let message = UsersCommand.Add.message(for: error)
            #expect(message.contains("'\(address)' is not a sensor address"), "\(message)")
        }
    }

    @Test(
        "the ACL grants exactly rpi/sensors/<address> for each address, in its canonical spelling, and nothing of a device's"
    )
    func aclLines() async throws {
        let directory = temporaryDirectory()
        let add = try UsersCommand.Add.parse(["pi1", "--password", "pw", "--sensor", "0X36", "0x5", "0x36"])
        let addresses = AccountChanges.sensorAddresses(add.sensor)
        #expect(add.role == .sensor && addresses == ["0x36", "0x05"])
        let store = UsersCommandTests.files(in: directory)
        try await AccountChanges.add(
            "pi1", role: add.role, sensors: addresses, password: "pw", trellisPasswordFile: nil, in: store)
        let acl = try String(contentsOfFile: directory + "/trellis-state/acl", encoding: .utf8)
        let section = acl.components(separatedBy: "# account: pi1").last ?? ""
        #expect(section.contains("topic write rpi/sensors/0x36\ntopic write rpi/sensors/0x05\n"))
        #expect(!section.contains("devices/"))
        #expect(try await store.list().map { "\($0.name)\t\($0.role)" } == ["pi1\tsensor 0x36 0x05"])
    }
}
