import Configuration
import Foundation
import TrellisBroker
import TrellisCore

/// What `trellis users add`, `init` and `migrate` decide, apart from their arguments and what they
/// print: the topic prefixes an account's rights are written with, the order in which an account
/// and Trellis's password file are written, and the accounts a migration moves.
package enum AccountChanges {
    /// The topic prefixes of the configuration `file` (or trellis.yaml), the `TRELLIS_…` variables of
    /// `environment` and the two prefix flags, as `trellis run` takes them; a configuration that does
    /// not read is one ``CommandFailure`` naming its problems.
    package static func prefixes(
        file: String?, plantPrefix: String? = nil, buttonPrefix: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> TopicPrefixes {
        var flags: [String: ConfigContent] = [:]
        if let plantPrefix { flags["plant.prefix"] = .string(plantPrefix) }
        if let buttonPrefix { flags["buttons.prefix"] = .string(buttonPrefix) }
        do {
            return try await EffectiveConfiguration.load(file: file, environment: environment, flags: flags)
                .relaySettings.topicPrefixes
        } catch {
            throw fail(
                "the configuration does not read, so the topic prefixes the rights are written with are unknown: "
                    + error.problems.joined(separator: "; "))
        }
    }

    /// Sensor addresses as typed, in their canonical spelling (0x and two lowercase hex digits), each once
    /// in its first order; an address that is not one is left out (the command refuses it first).
    package static func sensorAddresses(_ typed: [String]) -> [String] {
        var seen: Set<String> = []
        return typed.compactMap { SensorAddress.normalize($0) }.filter { seen.insert($0).inserted }
    }

    /// Adds `name` (or gives it this password and role) in `store`. For Trellis's own account the
    /// password is written to `trellisPasswordFile` first, readable by its owner alone: a password that
    /// cannot be kept is never set, and no account is made.
    package static func add(
        _ name: String, role: AccessControlList.Role, sensors: [String], password: String,
        trellisPasswordFile: String?, in store: any AccountStore
    ) async throws {
        if let trellisPasswordFile {
            do {
                try writeSecret(password, to: trellisPasswordFile)
            } catch {
                throw fail("cannot write Trellis's password to \(trellisPasswordFile): \(describe(error))")
            }
        }
        try await store.set(name, role: role, sensors: sensors, password: password)
    }

    /// Gives the existing account `name` a new password in `store`; for Trellis's own account (role
    /// trellis) the password is also written to `trellisPasswordFile`, readable by its owner alone.
    package static func setPassword(
        _ name: String, password: String, trellisPasswordFile: String, in store: any AccountStore
    ) async throws {
        guard try await store.setPassword(name, password: password) == .trellis else { return }
        do {
            try writeSecret(password, to: trellisPasswordFile)
        } catch {
            throw fail(
                "the password of \(name) changed, but cannot be written to \(trellisPasswordFile): \(describe(error))")
        }
    }

    /// An account a migration moves: its role, its sensors, and whether its password moved.
    package struct MigratedAccount: Equatable {
        package var name: String
        package var role: AccessControlList.Role
        package var sensors: [String]
        package var hasPassword: Bool

        package init(name: String, role: AccessControlList.Role, sensors: [String], hasPassword: Bool) {
            self.name = name
            self.role = role
            self.sensors = sensors
            self.hasPassword = hasPassword
        }
    }

    /// Writes a new plugin configuration at `config` with every account of `aclFile` (its role) and every
    /// other account of `passwordFile` (a client), their `$7$` hashes moved as they are; the administration
    /// account's password goes to `adminPasswordFile`. Refuses a missing password file, an existing
    /// configuration, and an administration account that is one of the accounts. Returns the accounts moved.
    package static func migrate(
        passwordFile: String, aclFile: String, config: String, adminUser: String, adminPasswordFile: String,
        topics: TopicPrefixes
    ) async throws -> [MigratedAccount] {
        let passwords: [MosquittoPasswordEntry]
        do {
            passwords = MosquittoPasswordEntry.parse(try String(contentsOfFile: passwordFile, encoding: .utf8))
        } catch {
            throw fail("cannot read the password file \(passwordFile): \(describe(error))")
        }
        let acl =
            (try? String(contentsOfFile: aclFile, encoding: .utf8)).map(AccessControlList.init(parsing:))
            ?? AccessControlList()
        var accounts = acl.accounts.map {
            MigratedAccount(
                name: $0.name, role: $0.role, sensors: acl.sensorAddresses[$0.name] ?? [], hasPassword: false)
        }
        for entry in passwords where !accounts.contains(where: { $0.name == entry.username }) {
            accounts.append(MigratedAccount(name: entry.username, role: .client, sensors: [], hasPassword: false))
        }
        if accounts.contains(where: { $0.name == adminUser }) {
            throw fail(
                "\(adminUser) is an account of \(passwordFile); name another administration account with --admin-user")
        }
        var profile = try await ProfileWriter.make(
            config: config, adminUser: adminUser, adminPasswordFile: adminPasswordFile, topics: topics)
        for index in accounts.indices {
            let hash = passwords.first { $0.username == accounts[index].name }?.pbkdf2
            accounts[index].hasPassword = hash != nil
            profile.add(accounts[index].name, role: accounts[index].role, sensors: accounts[index].sensors, hash: hash)
        }
        try profile.write()
        return accounts
    }
}
