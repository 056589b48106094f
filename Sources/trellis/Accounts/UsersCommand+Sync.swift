import TrellisApplication
import ArgumentParser
import Foundation
import TrellisCore

extension UsersCommand {
    /// The two prefix flags over the configuration's, for ``RunSettings`` and ``ProfileSettings``.
    struct PrefixFlags: ParsableArguments {
        @Option(name: .customLong("plant-prefix"), help: .setting("plant.prefix", valueName: "prefix"))
        var plantPrefix: String?

        @Option(name: .customLong("button-prefix"), help: .setting("buttons.prefix", valueName: "prefix"))
        var buttonPrefix: String?
    }

    /// The settings `trellis run` reads, for the topic prefixes an account's rights are written
    /// with: the configuration file, `TRELLIS_…` variables and these flags, as `trellis run` takes
    /// them, so the ACL and the plugin's roles match the running relay.
    struct RunSettings: ParsableArguments {
        @Option(name: .long, help: configurationHelp(writing: "rights"))
        var config: String?

        @OptionGroup var prefixFlags: PrefixFlags

        /// The topic prefixes of the configuration; a configuration that does not read is one line on standard error.
        func prefixes() async throws -> TopicPrefixes {
            try await Self.prefixes(file: config, prefixFlags)
        }

        /// The help of the option naming the configuration `trellis run` reads, whose prefixes the
        /// `written` (rights, or roles' rights) are written with.
        static func configurationHelp(writing written: String) -> ArgumentHelp {
            ArgumentHelp(
                "The configuration `trellis run` reads (default trellis.yaml when present); its topic prefixes (plant.prefix, buttons.prefix, also from TRELLIS_… variables) are the ones the \(written) are written with.",
                valueName: "file")
        }

        /// The topic prefixes of the configuration `file` (or trellis.yaml), the `TRELLIS_…` variables and
        /// the two prefix flags, as `trellis run` takes them.
        static func prefixes(file: String?, _ prefixFlags: PrefixFlags) async throws -> TopicPrefixes {
            try await AccountChanges.prefixes(
                file: file, plantPrefix: prefixFlags.plantPrefix, buttonPrefix: prefixFlags.buttonPrefix)
        }
    }

    /// ``RunSettings`` for `init` and `migrate`, whose `--config` is the plugin's file: the
    /// configuration `trellis run` reads is named with `--trellis-config`.
    struct ProfileSettings: ParsableArguments {
        @Option(name: .long, help: RunSettings.configurationHelp(writing: "roles' rights"))
        var trellisConfig: String?

        @OptionGroup var prefixFlags: PrefixFlags

        func prefixes() async throws -> TopicPrefixes {
            try await RunSettings.prefixes(file: trellisConfig, prefixFlags)
        }
    }

    /// `trellis users sync`: the rights of every existing account brought to the running version's table.
    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Bring the rights of every existing account in line with the topic table (after an upgrade).",
            discussion: """
                The dynamic security plugin keeps the roles and ACLs an account was given, so accounts made by an \
                older Trellis keep its broader rights until this runs. With dynamic security it re-derives from the \
                table the shared role of each kind (app, button, device, sensor, operator, trellis), each account's \
                own role user/NAME (a sensor node keeps its addresses), each account's list of roles, and the group \
                of clients without an account (anonymous, with its role): ACLs the table does not grant are \
                removed and missing ones added, in one request, in effect at once, with no account losing the \
                rights it keeps. Clients of no kind of the profile (made by hand) are left alone and named; the \
                administration account is left alone. With the files it writes the ACL anew from the table (then send the \
                broker SIGHUP; `trellis run` does the same at every start for the broker it starts). Running it \
                again changes nothing. The topic prefixes are those `trellis run` reads (--config, TRELLIS_… \
                variables, --plant-prefix, --button-prefix).
                """
        )

        @OptionGroup var options: Options

        func run() async throws {
            let store = options.store(topics: try await options.settings.prefixes())
            let report = try await store.sync()
            for line in report.changes { print(line) }
            for account in report.leftAlone { print("left alone \(account): no kind of account of the profile") }
            for warning in report.warnings { print("warning: \(warning)") }
            print(
                report.changes.isEmpty
                    ? "every account's rights already match the topic table"
                    : "\(report.changes.count) change\(report.changes.count == 1 ? "" : "s"), \(store.effect)")
        }
    }
}
