import ArgumentParser
import Foundation
import TrellisStore
import TrellisStoreSQLite

/// `trellis store backup` and `trellis store restore`: a consistent copy of a running SQLite
/// state, and putting one back.
extension StoreCommand {
    /// The state directory as `trellis run` finds it: `--state`, else `state.dir` of the
    /// configuration (the file, `TRELLIS_STATE_DIR`), else `trellis-state`.
    struct StateLocation: ParsableArguments {
        @Option(name: .long, help: ArgumentHelp("The state directory (default: state.dir, else trellis-state).", valueName: "dir"))
        var state: String?

        @Option(name: .long, help: ArgumentHelp("The configuration file to find state.dir in (default: trellis.yaml when present).", valueName: "file"))
        var config: String?

        func directory() async throws -> String {
            if let state { return state }
            let effective = try await EffectiveConfiguration.load(file: config)
            if !effective.string("state.store").isEmpty {
                throw fail("state.store names a PostgreSQL store: back it up with pg_dump (see docs/operations.md), or copy it "
                    + "into an SQLite state with `trellis store copy`")
            }
            return effective.string("state.dir")
        }
    }

    struct Backup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a consistent copy of an SQLite state, also while a relay runs on it.",
            discussion: """
                Uses SQLite's online backup API from a connection of its own: one snapshot of the database, read \
                in one read transaction, which never blocks the relay's writer (the relay goes on answering). The \
                copy is written beside FILE, checked (integrity, schema) and renamed to FILE when whole. Prints \
                the file, its size and its schema versions. A PostgreSQL store is backed up with pg_dump instead.
                """
        )

        @Argument(help: ArgumentHelp("The backup file to write.", valueName: "file"))
        var file: String

        @OptionGroup var location: StateLocation

        @Flag(name: .long, help: "Replace FILE when it exists (default: refuse).")
        var force = false

        func run() async throws {
            let directory = try await location.directory()
            if FileManager.default.fileExists(atPath: file) && !force {
                throw fail("\(file) exists; give --force to replace it")
            }
            let started = ContinuousClock.now
            do {
                let summary = try SQLiteBackup.backup(stateDirectory: directory, to: file)
                let elapsed = ContinuousClock.now - started
                print("backed up \(directory) to \(summary.path): \(summary.bytes) bytes, schema \(summary.migrations.joined(separator: ", ")), "
                    + "in \(elapsed.formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow)))")
            } catch {
                throw fail("backup of \(directory) failed: \(error)")
            }
        }
    }

    struct Restore: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace an SQLite state with a backup, when no relay runs on it.",
            discussion: """
                Checks FILE first (SQLite's integrity check; a Trellis schema; no schema version newer than this \
                release knows, as a backup of a newer release would be) and refuses a state a relay is running on \
                (every `trellis run` holds a lock on its state directory). The state replaced is kept beside it as \
                trellis.sqlite.before-restore-<time>. A backup of an earlier release is migrated when Trellis next \
                starts on it. Exits 1, saying why, when anything is refused.
                """
        )

        @Argument(help: ArgumentHelp("The backup file to restore.", valueName: "file"))
        var file: String

        @OptionGroup var location: StateLocation

        func run() async throws {
            let directory = try await location.directory()
            var outcome: (SQLiteBackup.Summary, String?)?
            let done: Bool
            do {
                done = try StateDirectoryLock.whileNoRelayRuns(directory) {
                    outcome = try SQLiteBackup.restore(file, intoStateDirectory: directory)
                }
            } catch {
                throw fail("not restored: \(error)")
            }
            guard done, let (summary, keptAt) = outcome else {
                throw fail("not restored: a relay is running on \(directory); stop it first")
            }
            print("restored \(summary.path) into \(directory) (schema \(summary.migrations.joined(separator: ", ")))"
                + (keptAt.map { "; the state it replaced is kept at \($0)" } ?? ""))
        }
    }
}
