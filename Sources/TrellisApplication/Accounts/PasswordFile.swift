import Foundation
import SystemPackage
import TrellisBroker

/// Mosquitto's password file, whose entries Trellis writes itself. A password reaches no command
/// line: `mosquitto_passwd -U` hashes a `name:password` line in a file of the owner's alone (so the
/// hash is Mosquitto's own `$7$` PBKDF2-SHA512, whatever its version chooses), and the hashed line
/// replaces the account's in this file, or is appended. `mosquitto_passwd -b FILE USER PASSWORD`
/// would show the password to every user of the machine in the process list, for as long as the
/// hashing takes.
package struct PasswordFile {
    package var path: String

    package init(path: String) {
        self.path = path
    }

    /// Gives `name` this password: its line is replaced, or appended.
    package func set(_ name: String, password: String) async throws {
        let entry = try await Self.hashedEntry(name, password: password)
        var entries = try lines()
        let line = "\(entry.username):\(entry.hash)"
        if let index = entries.firstIndex(where: { Self.username(of: $0) == name }) {
            entries[index] = line
        } else {
            entries.append(line)
        }
        try replace(with: entries)
    }

    /// Removes `name`'s line; a missing file or account changes nothing.
    package func remove(_ name: String) async throws {
        guard FileManager.default.fileExists(atPath: path) else { return }
        let entries = try lines()
        let kept = entries.filter { Self.username(of: $0) != name }
        if kept.count != entries.count { try replace(with: kept) }
    }

    /// The `$7$` hash of `password`, for the dynamic security plugin's configuration.
    package static func hash(_ password: String) async throws -> PBKDF2Hash {
        guard let hash = try await hashedEntry("hash", password: password).pbkdf2 else {
            throw fail("mosquitto_passwd wrote no $7$ hash: Mosquitto 2 is needed")
        }
        return hash
    }

    /// `name:password` hashed by `mosquitto_passwd -U` in a temporary file created 0600.
    package static func hashedEntry(_ name: String, password: String) async throws -> MosquittoPasswordEntry {
        guard !password.contains(where: \.isNewline) else { throw fail("a password may not contain a line break") }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hash-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        try writeSecret("\(name):\(password)", to: scratch)
        try run(["-U", scratch])
        let text = try String(contentsOfFile: scratch, encoding: .utf8)
        guard let entry = MosquittoPasswordEntry.parse(text).first, entry.username == name, entry.hash != password
        else {
            throw fail("mosquitto_passwd -U did not hash the password")
        }
        return entry
    }

    /// The file's lines as they are (comments and blank lines kept); none when it does not exist.
    private func lines() throws -> [String] {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        do {
            var lines = try String(contentsOfFile: path, encoding: .utf8).split(
                separator: "\n", omittingEmptySubsequences: false
            )
            .map(String.init)
            while lines.last?.isEmpty == true { lines.removeLast() }
            return lines
        } catch {
            throw fail("cannot read the password file \(path): \(describe(error))")
        }
    }

    /// The account a line names; nil for a comment or blank line.
    private static func username(of line: String) -> String? {
        MosquittoPasswordEntry.parse(line).first?.username
    }

    /// Writes `lines` in place of the file, keeping its mode and owner (0600 and ours for a new one).
    private func replace(with lines: [String]) throws {
        do {
            try replaceFile(path, with: Array(lines.map { $0 + "\n" }.joined().utf8), newFileMode: 0o600)
        } catch {
            throw fail("cannot write the password file \(path): \(describe(error))")
        }
    }

    /// Runs `mosquitto_passwd` with `arguments`, which never hold a password.
    private static func run(_ arguments: [String]) throws {
        guard let binary = executable() else {
            throw fail("mosquitto_passwd is not installed: install it with 'apt-get install -y mosquitto'")
        }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("passwd-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let child = try ChildProcess(path: binary, arguments: arguments, outputPath: output)
        child.waitUntilExit()
        guard child.terminationStatus == 0 else {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            throw fail("mosquitto_passwd failed: \(text.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }

    /// `mosquitto_passwd` on PATH, else where Debian and `make install` put it.
    private static func executable() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin", "/usr/sbin"]
        return directories.map { $0 + "/mosquitto_passwd" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
