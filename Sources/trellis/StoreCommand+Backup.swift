import TrellisApplication
import ArgumentParser
import Foundation

/// `trellis store backup` and `trellis store restore`: a consistent copy of a running SQLite
/// state, and putting one back.
extension StoreCommand {
    struct Backup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a consistent copy of an SQLite state, also while a relay runs on it.",
            discussion: """
                Uses SQLite's online backup API from a connection of its own: one snapshot of the database, read \
                in one read transaction, which never blocks the relay's writer (the relay goes on answering). The \
                copy is written beside FILE, checked (integrity, schema) and renamed to FILE when whole. Prints \
                the file, its size and its schema versions. The state is found as `trellis run` finds it (--state, \
                --config, state.dir); where there is none yet, it says so and exits 1. A PostgreSQL store is backed \
                up with pg_dump instead.
                """
        )

        @Argument(help: ArgumentHelp("The backup file to write.", valueName: "file"))
        var file: String

        @OptionGroup var location: StateStoreLocation

        @Flag(name: .long, help: "Replace FILE when it exists (default: refuse).")
        var force = false

        func run() async throws {
            let place = try await location.resolve().place
            let started = ContinuousClock.now
            let summary = try await StateBackup.backup(place, to: file, force: force)
            let elapsed = ContinuousClock.now - started
            print(
                "backed up \(place) to \(summary.path): \(summary.bytes) bytes, schema \(summary.migrations.joined(separator: ", ")), "
                    + "in \(elapsed.formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow)))")
        }
    }

    struct Restore: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace an SQLite state with a backup, when no relay runs on it.",
            discussion: """
                Checks FILE first (SQLite's integrity check; a Trellis schema; no schema version newer than this \
                release knows, as a backup of a newer release would be) and refuses a state a relay is running on \
                (every `trellis run` holds a lock on its state directory). The state replaced is kept beside it as \
                trellis.sqlite.before-restore-<time>. A state directory that does not exist yet is made, with the \
                lock `trellis run` takes, so a state can be restored before the first start. A backup of an earlier \
                release is migrated when Trellis next starts on it. Exits 1, saying why, when anything is refused.
                """
        )

        @Argument(help: ArgumentHelp("The backup file to restore.", valueName: "file"))
        var file: String

        @OptionGroup var location: StateStoreLocation

        func run() async throws {
            let place = try await location.resolve().place
            let (summary, keptAt) = try await StateBackup.restore(file, into: place)
            print(
                "restored \(summary.path) into \(place) (schema \(summary.migrations.joined(separator: ", ")))"
                    + (keptAt.map { "; the state it replaced is kept at \($0)" } ?? ""))
        }
    }
}
