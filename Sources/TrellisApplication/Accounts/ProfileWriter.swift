import Foundation
import TrellisBroker
import TrellisCore

/// Writes a new plugin configuration and its administration password, for `init` and `migrate`.
package struct ProfileWriter {
    package var path: String
    package var adminUser: String
    package var adminPasswordFile: String
    package var adminPassword: String
    package var config: DynamicSecurityConfig

    /// The topic prefixes every role's rights are written with: those `trellis run` reads.
    package var topics: TopicPrefixes

    /// Refuses an existing configuration; makes the administration account with a random password,
    /// hashed by `PasswordHash`, and the shared roles with their rights written with `topics`.
    package static func make(
        config path: String, adminUser: String, adminPasswordFile: String, topics: TopicPrefixes
    ) async throws -> ProfileWriter {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw fail(
                "\(path) exists: the broker's dynamic security plugin owns it, change its accounts with `trellis users add|remove|passwd`"
            )
        }
        let password = randomPassword()
        let hash = try PasswordFile.hash(password)
        return ProfileWriter(
            path: path, adminUser: adminUser, adminPasswordFile: adminPasswordFile, adminPassword: password,
            config: DynamicSecurityConfig(admin: adminUser, adminHash: hash, topics: topics), topics: topics)
    }

    /// Adds an account of `role` with its own role, its rights written with ``topics``; `hash` nil
    /// makes one that cannot log in until it is given a password.
    package mutating func add(
        _ name: String, role: AccessControlList.Role, sensors: [String] = [], hash: PBKDF2Hash?
    ) {
        config.add(name, role: role, sensors: sensors, hash: hash, topics: topics)
    }

    /// The configuration, then the password file; both readable by their owner alone. A password
    /// that cannot be written takes the configuration back, so no account is left without a way in.
    package func write() throws {
        do {
            try writeSecret(try config.render(), to: path, terminator: "")
        } catch {
            throw fail("cannot write \(path): \(describe(error))")
        }
        do {
            try writeSecret(adminPassword, to: adminPasswordFile)
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw fail("cannot write the administration password to \(adminPasswordFile): \(describe(error))")
        }
    }
}
