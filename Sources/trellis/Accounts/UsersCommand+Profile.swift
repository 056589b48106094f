import TrellisApplication
import ArgumentParser
import Foundation
import TrellisBroker

extension UsersCommand {
    /// `trellis users init`: the dynamic security plugin's first configuration.
    struct Init: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Write the dynamic security plugin's configuration, with its administration account (and Trellis's, with --trellis-account).",
            discussion: """
                Writes --config (mode 0600), which broker.dynsec.conf names as plugin_opt_config_file, with the \
                administration account (--admin-user, a random password written to --admin-password-file, mode \
                0600, never printed), Trellis's own account when --trellis-account names it, and the profile's \
                shared roles: app, button, device, sensor, operator, homeassistant, trellis, their rights written \
                with the topic prefixes `trellis run` reads (--trellis-config, TRELLIS_… variables, \
                --plant-prefix, --button-prefix). Start the broker with broker.dynsec.conf afterwards; from then on `trellis users` \
                changes the accounts over MQTT, at once. Refuses to overwrite an existing --config.
                """
        )

        @Option(name: .long, help: ArgumentHelp("The plugin's configuration file to write.", valueName: "file"))
        var config = "trellis-state/dynamic-security.json"

        @Option(
            name: .long,
            help: ArgumentHelp(
                "Also make Trellis's own account (role trellis) with this name and a random password, written to --trellis-password-file, so `trellis run` can log in as soon as the broker starts.",
                valueName: "name"))
        var trellisAccount: String?

        @Option(
            name: .long,
            help: ArgumentHelp(
                "Where the password of --trellis-account is written, for `trellis run --password-file`.",
                valueName: "file"))
        var trellisPasswordFile = "trellis-state/trellis.password"

        @OptionGroup var admin: Admin
        @OptionGroup var settings: ProfileSettings

        func validate() throws {
            try Add.validate(name: admin.adminUser)
            if let trellisAccount {
                try Add.validate(name: trellisAccount)
                if trellisAccount == admin.adminUser {
                    throw ValidationError("--trellis-account and --admin-user must differ")
                }
            }
        }

        func run() async throws {
            var profile = try await ProfileWriter.make(
                config: config, adminUser: admin.adminUser, adminPasswordFile: admin.adminPasswordFile,
                topics: try await settings.prefixes())
            if let trellisAccount {
                let password = randomPassword()
                profile.add(trellisAccount, role: .trellis, hash: try PasswordFile.hash(password))
                do {
                    try writeSecret(password, to: trellisPasswordFile)
                } catch {
                    throw fail("cannot write Trellis's password to \(trellisPasswordFile): \(describe(error))")
                }
            }
            try profile.write()
            print(
                "wrote \(config) with the administration account \(admin.adminUser) (its password is in \(admin.adminPasswordFile))"
                    + (trellisAccount.map { " and Trellis's account \($0) (its password is in \(trellisPasswordFile))" }
                        ?? "")
                    + "; start the broker with broker.dynsec.conf, then add accounts with `trellis users add`")
        }
    }

    /// `trellis users migrate`: the password file and ACL moved into the plugin's configuration.
    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move the accounts of the password file and ACL into a new dynamic security configuration.",
            discussion: """
                Writes --config as `init` does, plus every account of --acl-file with its role and every other \
                account of --password-file as a client. Passwords move as they are: Mosquitto 2's password file \
                holds PBKDF2-SHA512 hashes ($7$: iterations, salt, hash), the very fields the plugin keeps, so \
                every account logs in with its old password. A hash of Mosquitto 1's $6$ form cannot move: such an \
                account is made without a password and named, to be given one with `trellis users passwd`. The rights \
                are written with the topic prefixes `trellis run` reads, as `init` writes them. The two files are \
                left as they were (for broker.secure.conf). Then restart the broker with broker.dynsec.conf.
                """
        )

        @Option(name: .long, help: ArgumentHelp("The plugin's configuration file to write.", valueName: "file"))
        var config = "trellis-state/dynamic-security.json"

        @OptionGroup var files: Files
        @OptionGroup var admin: Admin
        @OptionGroup var settings: ProfileSettings

        func validate() throws {
            try Add.validate(name: admin.adminUser)
        }

        func run() async throws {
            let accounts = try await AccountChanges.migrate(
                passwordFile: files.passwordFile, aclFile: files.aclFile, config: config, adminUser: admin.adminUser,
                adminPasswordFile: admin.adminPasswordFile, topics: try await settings.prefixes())
            for account in accounts {
                print(
                    "migrated \(account.name) (\(([account.role.rawValue] + account.sensors).joined(separator: " ")))")
            }
            for account in accounts where !account.hasPassword {
                print(
                    "warning: \(account.name) has no password the plugin can read (none, or not a $7$ hash): give it one "
                        + "with `trellis users passwd \(account.name)` once the broker runs with broker.dynsec.conf")
            }
            print(
                "wrote \(config) with \(accounts.count) accounts and the administration account \(admin.adminUser) "
                    + "(its password is in \(admin.adminPasswordFile)); restart the broker with broker.dynsec.conf")
        }
    }
}
