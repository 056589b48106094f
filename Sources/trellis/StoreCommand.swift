import TrellisApplication
import ArgumentParser
import Foundation

/// `trellis store`: moving a state between stores.
struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Back up, restore and move Trellis's state.",
        discussion:
            "See docs/scaling-out.md in the source tree for moving from one relay on SQLite to several on PostgreSQL.",
        subcommands: [Backup.self, Restore.self, Copy.self]
    )

    struct Copy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a whole state into a PostgreSQL store, or from one back into a SQLite state directory.",
            discussion: """
                Copies plants, sensors and readings, buttons with their totals and histories, clients and \
                registrations with their missed counts, dead letters, the catalog with likes, boards, plant links \
                and alerts, and the device fleet with models, builds and logs, keeping every id. Not copied: the \
                delivery marks (each relay's broker session has its own) and the spam windows. The source is read \
                in one transaction and the target written in one: a failed copy writes nothing. \
                Stop every relay on the source first; start the relays on the target once the copy is done. \
                The target is a postgres:// URL (by default state.store, read as `trellis run` reads it), or a state \
                directory (SQLite, made when missing), which is refused while a relay runs on it. A target that already holds a state is refused unless --replace is given, \
                which empties it in the same transaction. Exits 0 after printing the rows copied per table and \
                checking that the target now reads back exactly what was copied; 1 on any failure.
                """
        )

        @Option(
            name: .long,
            help: ArgumentHelp(
                "The state to copy: a state directory (SQLite) or a postgres:// URL.", valueName: "dir|url"))
        var from: String

        @Option(
            name: .long,
            help: ArgumentHelp(
                """
                Where to copy it: a postgres://user[:password]@host[:port]/database[?sslmode=…] URL, or a state \
                directory (SQLite) (default: state.store of the configuration `trellis run` reads, such as \
                TRELLIS_STATE_STORE).
                """, valueName: "url|dir"))
        var to: String?

        @OptionGroup var configFile: ConfigFileOption

        @Flag(name: .long, help: "Empty a target that already holds a state before copying (default: refuse it).")
        var replace = false

        func run() async throws {
            for line in try await copied() { print(line) }
        }

        /// Copies as `run` does; the lines it prints: the rows of each table, then the total.
        func copied() async throws -> [String] {
            let target: String
            if let to {
                target = to
            } else {
                target = try await configFile.read().string("state.store")
            }
            guard !target.isEmpty else {
                throw fail(
                    "name the target with --to (a postgres:// URL or a state directory), or set state.store (TRELLIS_STATE_STORE)"
                )
            }
            let copied = try await StateCopy.copy(from: from, to: target, replacing: replace)
            return copied.rows.map { "\($0.table): \($0.rows) rows" } + [
                "copied \(copied.rows.map(\.rows).reduce(0, +)) rows from \(copied.source) to \(copied.target)"
            ]
        }
    }
}
