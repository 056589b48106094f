import ArgumentParser
import Foundation
import SystemPackage
import TrellisBroker
import TrellisCore
import TrellisRelay

/// `trellis users`: accounts of the secure profile (broker.secure.conf).
struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "Manage the accounts of the secure profile: Mosquitto's password file and ACL.",
        discussion: """
            The secure profile (broker.secure.conf) turns anonymous access off and gives every user only its \
            own topics through `%u` patterns in the ACL. These commands keep the password file (through \
            mosquitto_passwd) and the ACL in step. After a change, send the broker SIGHUP or restart \
            `trellis run` so it reads them again. The secure profile is described in docs/operations.md in the \
            source tree.
            """,
        subcommands: [Add.self, Remove.self, List.self]
    )

    /// Where the two files live; the defaults are the paths broker.secure.conf names.
    struct Files: ParsableArguments {
        @Option(name: .long, help: ArgumentHelp("Mosquitto password file.", valueName: "file"))
        var passwordFile = "trellis-state/passwd"

        @Option(name: .long, help: ArgumentHelp("Mosquitto ACL file.", valueName: "file"))
        var aclFile = "trellis-state/acl"

        func readACL() -> AccessControlList {
            (try? String(contentsOfFile: aclFile, encoding: .utf8)).map(AccessControlList.init(parsing:)) ?? AccessControlList()
        }

        func write(_ acl: AccessControlList) throws {
            try createParentDirectory(of: aclFile)
            try acl.render().write(toFile: aclFile, atomically: true, encoding: .utf8)
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an account, or change its password and role.",
            discussion: """
                Without a role flag the account is a client: it may publish rpi/torpi/NAME, \
                p2o/clients/NAME/{status,register,unregister} and trellis/clients/NAME/request/…, and read its \
                own replies. A sensor node (--sensor 0x36 0x37) may also publish rpi/sensors/0x36 and \
                rpi/sensors/0x37. Without --password a random one is generated and printed once.
                """
        )

        @Argument(help: "The user name (also its MQTT client id): 1–64 characters, no '/', '+', '#', ':' or spaces.")
        var name: String

        @Flag(name: .long, help: "A button: may also publish p2o/buttons/NAME/press.")
        var button = false
        @Flag(name: .long, help: "A device: may also publish devices/NAME/{status,telemetry,log} and read devices/NAME/{info,command} (Trellis alone writes those two).")
        var device = false
        @Option(name: .long, parsing: .upToNextOption,
                help: ArgumentHelp("A sensor node: may publish only the readings of these sensors, rpi/sensors/ADDRESS (I2C addresses such as 0x36, written as 0x and two lowercase hex digits in the topic).", valueName: "address"))
        var sensor: [String] = []
        @Flag(name: .long, help: "An operator: may also use the shared trellis/request/… topics.")
        var `operator` = false
        @Flag(name: .long, help: "Trellis's own account: reads and writes every topic. Its password is also written to --trellis-password-file.")
        var trellis = false

        @Option(name: .long, help: "The password (default: a random one, printed).")
        var password: String?

        @Option(name: .long, help: ArgumentHelp("Where the password of a --trellis account is written, for `trellis run --password-file`.", valueName: "file"))
        var trellisPasswordFile = "trellis-state/trellis.password"

        @OptionGroup var files: Files

        func validate() throws {
            if [button, device, `operator`, trellis, !sensor.isEmpty].filter({ $0 }).count > 1 {
                throw ValidationError("choose at most one of --button, --device, --sensor, --operator and --trellis")
            }
            for address in sensor where SensorAddress.normalize(address) == nil {
                throw ValidationError("'\(address)' is not a sensor address: write 0x and one or two hex digits, 0x03 to 0x77")
            }
            if case let .failure(error) = ButtonIdentifier.validate(name, kind: "user name") {
                throw ValidationError(error.message)
            }
            if name.contains(":") || name.contains(" ") {
                throw ValidationError("the user name may contain neither ':' nor spaces")
            }
        }

        func run() async throws {
            let role: AccessControlList.Role = button ? .button : device ? .device : !sensor.isEmpty ? .sensor
                : `operator` ? .operator : trellis ? .trellis : .client
            let addresses = Self.uniqued(sensor.compactMap { SensorAddress.normalize($0) })
            let secret = password ?? Self.randomPassword()
            if trellis {
                // Before the account exists: a password that cannot be kept must not be set.
                do {
                    try Self.writeSecret(secret, to: trellisPasswordFile)
                } catch {
                    let reason = (error as? Errno).map { "\($0)" } ?? (error as NSError).localizedDescription
                    throw fail("cannot write Trellis's password to \(trellisPasswordFile): \(reason)")
                }
            }
            try await PasswordFile(path: files.passwordFile).set(name, password: secret)
            var acl = files.readACL()
            acl.set(name, role: role, sensors: addresses)
            try files.write(acl)
            print("added \(name) (\(acl.roleText(of: name, role: role)))" + (password == nil ? "; password: \(secret)" : ""))
        }

        /// `addresses` without repeats, in their first order.
        static func uniqued(_ addresses: [String]) -> [String] {
            var seen: Set<String> = []
            return addresses.filter { seen.insert($0).inserted }
        }

        /// Writes `secret` and a newline to `path`, readable by its owner alone: the file is opened
        /// (created with mode 0600, or emptied) and narrowed to 0600 before a byte of it is written.
        static func writeSecret(_ secret: String, to path: String) throws {
            try createParentDirectory(of: path)
            let file = try FileDescriptor.open(FilePath(path), .writeOnly, options: [.create, .truncate],
                                               permissions: [.ownerReadWrite])
            try file.closeAfter {
                guard fchmod(file.rawValue, 0o600) == 0 else { throw Errno(rawValue: errno) }
                _ = try file.writeAll(Array((secret + "\n").utf8))
            }
        }

        static func randomPassword() -> String {
            let alphabet = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
            var generator = SystemRandomNumberGenerator()
            return String((0..<20).map { _ in alphabet.randomElement(using: &generator)! })
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an account from the password file and the ACL.")

        @Argument(help: "The user name.")
        var name: String

        @OptionGroup var files: Files

        func run() async throws {
            var acl = files.readACL()
            guard acl.remove(name) else { throw fail("there is no account \(name) in \(files.aclFile)") }
            try await PasswordFile(path: files.passwordFile).remove(name)
            try files.write(acl)
            print("removed \(name)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the accounts and their roles.")

        @OptionGroup var files: Files

        func run() async throws {
            let acl = files.readACL()
            for (name, role) in acl.accounts { print("\(name)\t\(acl.roleText(of: name, role: role))") }
        }
    }
}

/// Mosquitto's password file, changed only through `mosquitto_passwd`, which hashes.
struct PasswordFile {
    var path: String

    func set(_ name: String, password: String) async throws {
        let create = !FileManager.default.fileExists(atPath: path)
        if create {
            try createParentDirectory(of: path)
        }
        try await run((create ? ["-c"] : []) + ["-b", path, name, password])
    }

    func remove(_ name: String) async throws {
        guard FileManager.default.fileExists(atPath: path) else { return }
        try await run(["-D", path, name])
    }

    private func run(_ arguments: [String]) async throws {
        let candidates = ["/usr/bin/mosquitto_passwd", "/usr/local/bin/mosquitto_passwd", "/usr/sbin/mosquitto_passwd"]
        guard let binary = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw fail("mosquitto_passwd is not installed: install it with 'apt-get install -y mosquitto'")
        }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("passwd-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let child = try ChildProcess(path: binary, arguments: arguments, outputPath: output)
        child.waitUntilExit()
        guard child.terminationStatus == 0 else {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            throw fail("mosquitto_passwd failed on \(path): \(text.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }
}

/// Creates the directory `path` goes in, with its parents; a bare file name goes in the current one.
private func createParentDirectory(of path: String) throws {
    let directory = (path as NSString).deletingLastPathComponent
    try FileManager.default.createDirectory(atPath: directory.isEmpty ? "." : directory, withIntermediateDirectories: true)
}
