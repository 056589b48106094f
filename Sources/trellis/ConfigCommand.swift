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

            Sections (in the file only; `trellis config example` shows each, commented out):
            \(EffectiveConfiguration.sectionsHelp)
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

        @Option(
            help: ArgumentHelp(
                "The YAML file, named as the other commands name it (instead of <file>).", valueName: "file"))
        var config: String?

        func validate() throws {
            if let file, let config, file != config {
                throw ValidationError("name the file once: <file> is \(file) and --config \(config)")
            }
        }

        func run() async throws {
            let effective = try await EffectiveConfiguration.forCommand(file: file ?? config)
            for line in effective.report { print(line) }
        }
    }

    struct Example: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Print a configuration file with every key at its default, each with one line saying what it does."
        )

        func run() {
            print(ExampleConfiguration.text, terminator: "")
        }
    }
}
