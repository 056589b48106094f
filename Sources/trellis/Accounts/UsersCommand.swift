import TrellisApplication
import ArgumentParser
import Foundation
import SystemPackage
import TrellisBroker
import TrellisCore
import TrellisMQTT

/// `trellis users`: accounts of the secure profile, in Mosquitto's dynamic security plugin
/// (broker.dynsec.conf) or in its password file and ACL (broker.secure.conf).
struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract:
            "Manage the accounts of the secure profile: in Mosquitto's dynamic security plugin, or its password file and ACL.",
        discussion: """
            Two backends keep the accounts, with the same roles and topic rights. Dynamic security \
            (broker.dynsec.conf): `trellis users init` (or `migrate`) writes the plugin's configuration and an \
            administration account, whose password goes to --admin-password-file (mode 0600); from then on \
            add, remove and passwd change the plugin over MQTT ($CONTROL/dynamic-security/v1) and are in effect \
            at once, without signalling the broker. Files (broker.secure.conf): the password file (Mosquitto's $7$ \
            hashes, made in-process: any password, a ':' too) and the ACL (`%u` patterns); after a change send the broker SIGHUP or restart \
            `trellis run`. The backend is dynamic security when --admin-password-file exists, the files \
            otherwise; --backend chooses. Roles: client (the default; the plugin's role `app`), button, device, \
            sensor, operator and trellis; every role's rights are the topic table's, written with the topic prefixes \
            of the configuration `trellis run` reads (--config, TRELLIS_… variables, --plant-prefix, --button-prefix). \
            After an upgrade, `trellis users sync` brings existing accounts to the new table. Described in \
            docs/operations.md and docs/security.md in the source tree.
            """,
        subcommands: [Init.self, Add.self, Remove.self, List.self, Passwd.self, Migrate.self, Local.self, Sync.self]
    )

    /// Where the file-based profile's two files live; the defaults are the paths broker.secure.conf names.
    struct Files: ParsableArguments {
        @Option(name: .long, help: ArgumentHelp("Mosquitto password file (files backend).", valueName: "file"))
        var passwordFile = "trellis-state/passwd"

        @Option(name: .long, help: ArgumentHelp("Mosquitto ACL file (files backend).", valueName: "file"))
        var aclFile = "trellis-state/acl"
    }

    /// The administration account of the dynamic security plugin.
    struct Admin: ParsableArguments {
        @Option(name: .long, help: ArgumentHelp("The plugin's administration account.", valueName: "name"))
        var adminUser = DynamicSecurityRoles.defaultAdmin

        @Option(
            name: .long,
            help: ArgumentHelp(
                "File holding the administration account's password (mode 0600); its presence selects the dynamic security backend.",
                valueName: "file"))
        var adminPasswordFile = "trellis-state/admin.password"
    }

    enum Backend: String, ExpressibleByArgument, CaseIterable {
        case files
        case dynamicSecurity = "dynamic-security"
    }

    /// Which backend, and how to reach it.
    struct Options: ParsableArguments {
        @Option(
            name: .long,
            help: ArgumentHelp(
                "files or dynamic-security (default: dynamic-security when --admin-password-file exists, files otherwise).",
                valueName: "backend"))
        var backend: Backend?

        @Option(
            name: .long,
            help: ArgumentHelp("The broker running the dynamic security plugin, as HOST:PORT.", valueName: "address"))
        var broker = "127.0.0.1:1883"

        @Option(
            name: .long,
            help: ArgumentHelp(
                "Seconds to wait for the broker's login, and for each request's acknowledgement and answer.",
                valueName: "seconds"))
        var timeout = 10.0

        @OptionGroup var admin: Admin
        @OptionGroup var files: Files
        @OptionGroup var settings: RunSettings

        func validate() throws {
            guard BrokerAddress(parsing: broker) != nil else {
                throw ValidationError("--broker '\(broker)' is not HOST:PORT")
            }
            guard timeout > 0, timeout <= 3600 else {
                throw ValidationError("--timeout must be between 0 and 3600 seconds")
            }
        }

        var usesDynamicSecurity: Bool {
            (backend ?? (FileManager.default.fileExists(atPath: admin.adminPasswordFile) ? .dynamicSecurity : .files))
                == .dynamicSecurity
        }

        /// The accounts, their rights written with `topics` (``RunSettings/prefixes()`` where they are written).
        func store(topics: TopicPrefixes = TopicPrefixes()) -> any AccountStore {
            guard usesDynamicSecurity else {
                return FileAccounts(passwordFile: files.passwordFile, aclFile: files.aclFile, topics: topics)
            }
            return DynamicSecurityAccounts(
                control: DynamicSecurityControl(
                    address: BrokerAddress(parsing: broker)!, admin: admin.adminUser,
                    passwordFile: admin.adminPasswordFile,
                    timeout: .milliseconds(Int(timeout * 1000))), topics: topics)
        }

        /// Refuses the administration account's name as an account of the profile.
        func checkNotAdmin(_ name: String) throws {
            if usesDynamicSecurity && name == admin.adminUser {
                throw fail(
                    "\(name) is the dynamic security plugin's administration account, not an account of the profile")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove an account.",
            discussion:
                "With dynamic security the account is disconnected and refused at once; with the files after a SIGHUP."
        )

        @Argument(help: "The user name.")
        var name: String

        @OptionGroup var options: Options

        func run() async throws {
            try options.checkNotAdmin(name)
            let store = options.store(topics: try await options.settings.prefixes())
            try await store.remove(name)
            print("removed \(name), \(store.effect)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "List the accounts and their roles, one per line: NAME, a tab, the role (and a sensor node's addresses)."
        )

        @OptionGroup var options: Options

        func run() async throws {
            for account in try await options.store().list() { print("\(account.name)\t\(account.role)") }
        }
    }

    struct Passwd: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give an account a new password.",
            discussion: """
                With dynamic security the new password is needed from the next login on, at once. For \
                Trellis's own account (role trellis) the new password is also written to --trellis-password-file.
                """
        )

        @Argument(help: "The user name.")
        var name: String

        @OptionGroup var passwordInput: PasswordInput

        @Option(
            name: .long,
            help: ArgumentHelp(
                "Where the password of Trellis's account is written, for `trellis run --password-file`.",
                valueName: "file"))
        var trellisPasswordFile = "trellis-state/trellis.password"

        @OptionGroup var options: Options

        func run() async throws {
            try options.checkNotAdmin(name)
            let (secret, generated) = try passwordInput.resolve()
            let store = options.store()
            try await AccountChanges.setPassword(
                name, password: secret, trellisPasswordFile: trellisPasswordFile, in: store)
            print("changed the password of \(name), \(store.effect)" + (generated ? "; password: \(secret)" : ""))
        }
    }
}
