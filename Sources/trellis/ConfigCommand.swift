import TrellisApplication
import ArgumentParser
import Configuration
import Foundation

/// `trellis config`: check a configuration file, or print the example with every key.
struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Check Trellis's configuration, or print an example file with every key.",
        discussion: """
            Settings come from flags, then TRELLIS_… environment variables (the key in upper case with `_` for \
            `.`, such as TRELLIS_SPAM_LIMIT), then the YAML file, then the defaults.

            Keys:
            \(SettingKey.all.map { "  \($0.key) (\($0.kind.name)\($0.reloadable ? ", reloadable" : "")): \($0.help)" }.joined(separator: "\n"))
            """,
        subcommands: [Check.self, Example.self]
    )

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate a configuration file and print the effective configuration with each value's source.",
            discussion:
                "Exits 1, naming each key and what is allowed, on an unknown key, a wrong type or a value out of range; `trellis run` refuses to start with such a file. Keys that SIGHUP cannot change are marked \"a change needs a restart\" (broker.address, broker.tls.*, …). A password in broker.address is shown as ***."
        )

        @Argument(help: ArgumentHelp("The YAML file (default: trellis.yaml when present).", valueName: "file"))
        var file: String?

        func run() async throws {
            let effective = try await EffectiveConfiguration.forCommand(file: file)
            print("# effective configuration" + (effective.file.map { " (file: \($0))" } ?? " (no file)"))
            for setting in SettingKey.all {
                let value = EffectiveConfiguration.shown(
                    setting.key, effective.values[setting.key]?.content ?? setting.defaultValue)
                let source = EffectiveConfiguration.describe(
                    effective.source(setting.key), setting: setting, file: effective.file)
                print(
                    "\(setting.key) = \(value)    # from \(source)\(setting.reloadable ? "" : "; a change needs a restart")"
                )
            }
            for bridge in effective.bridges {
                print(
                    "bridges.\(bridge.name) = \(bridge.url), window \(bridge.window), max_bytes \(bridge.maxBytes), max_age \(Int(bridge.maxAge))    # from \(effective.file ?? "the file"); a change needs a restart"
                )
                for (direction, rules) in [("out", bridge.outRules), ("in", bridge.inRules)] {
                    for (index, rule) in rules.enumerated() {
                        print("bridges.\(bridge.name).\(direction)[\(index)]: \(rule.summary)")
                    }
                }
            }
        }
    }

    struct Example: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Print a configuration file with every key at its default, each with one line saying what it does."
        )

        func run() {
            print(ConfigCommand.exampleFile(), terminator: "")
        }
    }

    /// The text of trellis.example.yaml.
    static func exampleFile() -> String {
        var lines = [
            "# trellis.example.yaml: every setting of `trellis run` at its default.",
            "# Copy it to trellis.yaml (read from the working directory) or pass --config FILE.",
            "# Environment variables (TRELLIS_SPAM_LIMIT, …) override the file; flags override both.",
            "# `trellis config check` validates a file; SIGHUP applies the keys marked reloadable."
        ]
        var open: [Substring] = []
        for setting in SettingKey.all {
            let parts = setting.key.split(separator: ".")
            let groups = Array(parts.dropLast())
            // Open the nested mappings this key needs that the previous key did not.
            let shared = zip(open, groups).prefix(while: { $0 == $1 }).count
            for depth in shared..<groups.count {
                if depth == 0 { lines.append("") }
                lines.append(String(repeating: "  ", count: depth) + "\(groups[depth]):")
            }
            open = groups
            let indent = String(repeating: "  ", count: groups.count)
            let value: String =
                switch setting.defaultValue {
                case let .string(text): "\"\(text)\""
                default: EffectiveConfiguration.render(setting.defaultValue)
                }
            lines.append("\(indent)# \(setting.help)\(setting.reloadable ? " (reloadable)" : "")")
            lines.append("\(indent)\(parts.last ?? ""): \(value)")
        }
        return (lines + bridgesExample).joined(separator: "\n") + "\n"
    }

    /// The `bridges:` section, commented out: it has no default (docs/bridge.md).
    static let bridgesExample = [
        "",
        "# Upstream brokers to bridge to, none by default (docs/bridge.md); a change needs a restart.",
        "# bridges:",
        "#   cloud:",
        "#     url: mqtt://broker.example:1883",
        "#     # Over TLS (url: mqtts://HOST[:PORT]) with an account, as a cloud broker wants:",
        "#     # tls_ca: /etc/trellis/upstream-ca.pem      (the system's authorities without it)",
        "#     # tls_cert: /etc/trellis/bridge.crt        (with tls_key, for a client certificate)",
        "#     # tls_key: /etc/trellis/bridge.key",
        "#     # username: home1",
        "#     # password_file: /etc/trellis/bridge.password",
        "#     # Messages sent upstream and not yet acknowledged, at most.",
        "#     window: 64",
        "#     # The queue's bounds: past them the oldest messages are dropped, counted and logged.",
        "#     max_bytes: 67108864",
        "#     max_age: 604800",
        "#     # Local to upstream: kept in the state until the upstream broker acknowledged them.",
        "#     out:",
        "#       - topic: \"sensors/#\"",
        "#         # Added upstream: sensors/x is published as site/home1/sensors/x.",
        "#         prefix: \"site/home1/\"",
        "#         qos: 1",
        "#         retain: false",
        "#     # Upstream to local: acknowledged upstream once the local broker has the message.",
        "#     in:",
        "#       - topic: \"site/home1/commands/#\"",
        "#         # Taken off: site/home1/commands/x arrives locally as commands/x.",
        "#         prefix: \"site/home1/\"",
        "#         qos: 1"
    ]
}
