import Foundation
import SystemPackage
import TrellisBroker

/// Mosquitto's password file, whose entries Trellis writes itself: an account's line, `name:$7$…`
/// (hashed by ``PasswordHash``, so a password reaches no command line and no other file), replaces the
/// account's line, or is appended. The file keeps its mode and owner; a new one is the owner's alone.
package struct PasswordFile {
    package var path: String

    package init(path: String) {
        self.path = path
    }

    /// Gives `name` this password: its line is replaced, or appended.
    package func set(_ name: String, password: String) throws {
        let entry = try Self.hashedEntry(name, password: password)
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
    package func remove(_ name: String) throws {
        guard FileManager.default.fileExists(atPath: path) else { return }
        let entries = try lines()
        let kept = entries.filter { Self.username(of: $0) != name }
        if kept.count != entries.count { try replace(with: kept) }
    }

    /// The `$7$` hash of `password`, for the dynamic security plugin's configuration.
    package static func hash(_ password: String) throws -> PBKDF2Hash {
        try checked(password)
        return PasswordHash.make(password)
    }

    /// `name`'s line with a new hash of `password`.
    package static func hashedEntry(_ name: String, password: String) throws -> MosquittoPasswordEntry {
        MosquittoPasswordEntry(username: name, hash: PasswordHash.field(try hash(password)))
    }

    /// A password the broker can be given: Mosquitto's clients and the configuration files read one line.
    private static func checked(_ password: String) throws {
        guard !password.contains(where: \.isNewline) else { throw fail("a password may not contain a line break") }
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
}
