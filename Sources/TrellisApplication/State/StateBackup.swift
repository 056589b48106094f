import Foundation
import TrellisStoreSQLite

/// `trellis store backup` and `restore`: a consistent copy of an SQLite state, taken also while a
/// relay runs on it, and a checked backup put back when none does. A PostgreSQL store is refused,
/// naming what backs one up. Every refusal is a ``CommandFailure``.
package enum StateBackup {
    /// The directory of the SQLite state at `place`.
    package static func directory(of place: StatePlace) throws -> String {
        guard case let .sqlite(directory) = place else {
            throw fail(
                "\(place) is a PostgreSQL store: back it up with pg_dump (see docs/operations.md), or copy it "
                    + "into an SQLite state with `trellis store copy`")
        }
        return directory
    }

    /// Writes a backup of the state at `place` to `file`, refused when `file` exists unless `force`.
    package static func backup(_ place: StatePlace, to file: String, force: Bool) async throws -> SQLiteBackup.Summary {
        let directory = try directory(of: place)
        if FileManager.default.fileExists(atPath: file) && !force {
            throw fail("\(file) exists; give --force to replace it")
        }
        do {
            return try await place.withHold(.read) { try SQLiteBackup.backup(stateDirectory: directory, to: file) }
        } catch let error as StateAccessError {
            throw fail("\(error)")
        } catch {
            throw fail("backup of \(directory) failed: \(error)")
        }
    }

    /// Restores `file` into the state at `place` (made where missing), refused while a relay runs on it;
    /// returns what was restored and where the state it replaced is kept.
    package static func restore(_ file: String, into place: StatePlace) async throws -> (
        summary: SQLiteBackup.Summary, keptAt: String?
    ) {
        let directory = try directory(of: place)
        do {
            return try await place.withHold(.changeAlone) {
                try SQLiteBackup.restore(file, intoStateDirectory: directory)
            }
        } catch {
            throw fail("not restored: \(error)")
        }
    }
}
