import Foundation
import TrellisBroker

/// Where the secure profile's accounts live: Mosquitto's password file and ACL (`FileAccounts`),
/// which the broker reads again on SIGHUP, or its dynamic security plugin
/// (`DynamicSecurityAccounts`), changed over MQTT and in effect at once.
package protocol AccountStore {
    /// Adds an account, or gives an existing one this password and role.
    func set(_ name: String, role: AccessControlList.Role, sensors: [String], password: String) async throws
    /// Removes an account; fails when there is none.
    func remove(_ name: String) async throws
    /// Every account with its role as `list` prints it (`sensor 0x36 0x37`).
    func list() async throws -> [(name: String, role: String)]
    /// Gives an existing account a new password and returns its role; fails when there is none.
    func setPassword(_ name: String, password: String) async throws -> AccessControlList.Role?
    /// Brings every account's rights in line with the topic table (`trellis users sync`); nothing
    /// changes when they are.
    func sync() async throws -> SyncReport
    /// Printed after a change: when it takes effect.
    var effect: String { get }
}

/// What `sync` did: a line per role, group, account or file changed, the accounts it left alone, and
/// what needs a hand.
package struct SyncReport {
    package var changes: [String] = []
    package var leftAlone: [String] = []
    package var warnings: [String] = []
}

/// The file-based profile (broker.secure.conf): the password file (`PasswordFile`, its `$7$` hashes made
/// in-process by `PasswordHash`), and the ACL, rewritten whole by `AccessControlList`.
package struct FileAccounts: AccountStore {
    package var passwordFile: String
    package var aclFile: String
    /// The topic prefixes the ACL is written with: those of the configuration `trellis run` reads.
    package var topics = AccessControlList.Topics()

    package init(passwordFile: String, aclFile: String, topics: AccessControlList.Topics = AccessControlList.Topics()) {
        self.passwordFile = passwordFile
        self.aclFile = aclFile
        self.topics = topics
    }

    package var effect: String { "send the broker SIGHUP (or restart `trellis run`) for it to take effect" }

    package func readACL() -> AccessControlList {
        (try? String(contentsOfFile: aclFile, encoding: .utf8)).map(AccessControlList.init(parsing:))
            ?? AccessControlList()
    }

    package func write(_ acl: AccessControlList) throws {
        try write(acl, topics: topics)
    }

    package func write(_ acl: AccessControlList, topics: AccessControlList.Topics) throws {
        try createParentDirectory(of: aclFile)
        try replaceFile(aclFile, with: Array(acl.render(topics: topics).utf8), newFileMode: 0o644)
    }

    package func set(_ name: String, role: AccessControlList.Role, sensors: [String], password: String) async throws {
        try PasswordFile(path: passwordFile).set(name, password: password)
        var acl = readACL()
        acl.set(name, role: role, sensors: sensors)
        try write(acl)
    }

    package func remove(_ name: String) async throws {
        var acl = readACL()
        guard acl.remove(name) else { throw fail("there is no account \(name) in \(aclFile)") }
        try PasswordFile(path: passwordFile).remove(name)
        try write(acl)
    }

    /// The ACL is written whole from the table at every change: writing it again is the sync.
    package func sync() async throws -> SyncReport {
        let acl = readACL()
        let before = try? String(contentsOfFile: aclFile, encoding: .utf8)
        guard before != acl.render(topics: topics) else { return SyncReport() }
        try write(acl)
        return SyncReport(changes: [
            "wrote \(aclFile) anew from the topic table, for \(acl.accounts.count) account\(acl.accounts.count == 1 ? "" : "s")"
        ])
    }

    package func list() async throws -> [(name: String, role: String)] {
        let acl = readACL()
        return acl.accounts.map { ($0.name, acl.roleText(of: $0.name, role: $0.role)) }
    }

    package func setPassword(_ name: String, password: String) async throws -> AccessControlList.Role? {
        let role = readACL().accounts.first { $0.name == name }?.role
        let hashed =
            (try? String(contentsOfFile: passwordFile, encoding: .utf8)).map(MosquittoPasswordEntry.parse) ?? []
        guard role != nil || hashed.contains(where: { $0.username == name }) else {
            throw fail("there is no account \(name) in \(aclFile) or \(passwordFile)")
        }
        try PasswordFile(path: passwordFile).set(name, password: password)
        return role
    }
}

/// Creates the directory `path` goes in, with its parents; a bare file name goes in the current one.
package func createParentDirectory(of path: String) throws {
    let directory = (path as NSString).deletingLastPathComponent
    try FileManager.default.createDirectory(
        atPath: directory.isEmpty ? "." : directory, withIntermediateDirectories: true)
}
