import Foundation
import TrellisBroker
import TrellisCore

/// The accounts `trellis run` keeps for the broker it starts itself, when that broker's
/// configuration names a `password_file` and an `acl_file` (broker.conf and broker.secure.conf do):
/// Trellis's own account, which it logs in with, and `operator`, the local operator's, whose
/// password stays on this machine in a file of the state directory's owner alone.
///
/// Every start writes the ACL anew from the topic table, so the rights follow the running version,
/// and makes a missing account with a random password; accounts added with `trellis users` stay.
/// The operator's password is also written as option files of Mosquitto's clients
/// (`STATE/mosquitto-clients/mosquitto_{pub,sub,rr}`, read when `XDG_CONFIG_HOME` names that
/// directory), so `mosquitto_pub` and its kin log in as the operator with no password in an argument list.
package struct LocalAccounts {
    package static let trellisAccount = "trellis"
    package static let operatorAccount = "operator"

    package var passwordFile: String
    package var aclFile: String
    /// Where the passwords and the client option files go: the state directory for `trellis run`,
    /// /etc/trellis for the Debian package.
    package var state: String

    package init(passwordFile: String, aclFile: String, state: String) {
        self.passwordFile = passwordFile
        self.aclFile = aclFile
        self.state = state
    }

    /// The accounts of the broker configuration at `configPath`, or nil when it names no
    /// password file and ACL (a broker without accounts: nothing to keep). Relative paths are
    /// taken from the working directory, as Mosquitto, started from it, takes them.
    package init?(brokerConfig configPath: String, state: String) {
        guard let text = try? String(contentsOfFile: configPath, encoding: .utf8) else { return nil }
        /// The value of the first `key value` line, split on spaces and tabs as Mosquitto reads them.
        func value(_ key: String) -> String? {
            text.split(separator: "\n").lazy.map { $0.split(maxSplits: 1, whereSeparator: { $0 == " " || $0 == "\t" }) }
                .first { $0.count == 2 && $0[0] == key }
                .map { $0[1].trimmingCharacters(in: .whitespaces) }
        }
        guard let passwd = value("password_file"), let acl = value("acl_file") else { return nil }
        passwordFile = passwd
        aclFile = acl
        self.state = state
    }

    package func passwordPath(of account: String) -> String { Self.passwordPath(of: account, in: state) }

    package static func passwordPath(of account: String, in directory: String) -> String {
        (directory as NSString).appendingPathComponent("\(account).password")
    }

    /// The password kept in `path` (its first line), or nil when there is none.
    package static func password(at path: String) -> String? {
        let text = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        return text?.isEmpty == false ? text : nil
    }

    /// Where the Mosquitto clients' option files go (`XDG_CONFIG_HOME` for them).
    package var clientOptionsDirectory: String { (state as NSString).appendingPathComponent("mosquitto-clients") }

    /// Makes the missing accounts, writes the ACL from the table and returns Trellis's password.
    package func ensure(prefixes: TopicPrefixes) async throws -> String {
        let files = FileAccounts(passwordFile: passwordFile, aclFile: aclFile, topics: prefixes)
        let hashed =
            (try? String(contentsOfFile: passwordFile, encoding: .utf8)).map(MosquittoPasswordEntry.parse) ?? []
        let listed = files.readACL().accounts
        var passwords: [String: String] = [:]
        for (name, role) in [(Self.trellisAccount, AccessControlList.Role.trellis), (Self.operatorAccount, .operator)] {
            let path = passwordPath(of: name)
            let kept = Self.password(at: path)
            if let kept, listed.contains(where: { $0.name == name && $0.role == role }),
                hashed.contains(where: { $0.username == name })
            {
                passwords[name] = kept
                continue
            }
            let password = kept ?? randomPassword()
            try await files.set(name, role: role, sensors: [], password: password)
            try writeSecret(password, to: path)
            passwords[name] = password
        }
        try files.write(files.readACL())
        try writeClientOptions(password: passwords[Self.operatorAccount]!)
        return passwords[Self.trellisAccount]!
    }

    /// Writes the ACL anew from the table with the accounts it holds, where Trellis logs in with an
    /// account of its own (broker.secure.conf): an upgrade brings every account its role's new rights.
    /// Nothing when there is no ACL yet.
    package func rewriteACL(prefixes: TopicPrefixes) throws {
        guard FileManager.default.fileExists(atPath: aclFile) else { return }
        let files = FileAccounts(passwordFile: passwordFile, aclFile: aclFile, topics: prefixes)
        try files.write(files.readACL())
    }

    /// The operator's login for `mosquitto_pub`, `mosquitto_sub` and `mosquitto_rr`, mode 0600.
    private func writeClientOptions(password: String) throws {
        try FileManager.default.createDirectory(
            atPath: clientOptionsDirectory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        for client in ["mosquitto_pub", "mosquitto_sub", "mosquitto_rr"] {
            try writeSecret(
                "-u \(Self.operatorAccount)\n-P \(password)",
                to: (clientOptionsDirectory as NSString).appendingPathComponent(client))
        }
    }
}
