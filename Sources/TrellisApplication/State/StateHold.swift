import Foundation
import TrellisStoreSQLite
#if canImport(Glibc)
    import Glibc
#endif

/// How a command uses the state: whether it may create it, and which lock it holds on an SQLite
/// state directory. Every `trellis run` on an SQLite state holds the shared `flock` on
/// `trellis.lock` in it for as long as it runs (the kernel releases it when the process ends,
/// however it ends), so a command that needs the state alone can tell that a relay runs on it.
package enum StateUse {
    /// Only reads it, also beside a running relay: the state must exist (it is never created).
    case read
    /// Changes it beside running relays, each change one transaction (`trellis run`, `catalog
    /// import`): created where missing; the shared lock is held meanwhile.
    case changeBesideRelays
    /// Changes it with no relay running (`plants import-host`, `store restore`, a copy's target):
    /// created where missing; the exclusive lock is held meanwhile, refused while a relay runs.
    case changeAlone
}

/// Why a command cannot use a state, naming the place and what to do about it.
package struct StateAccessError: Error, CustomStringConvertible {
    package var description: String

    /// A reading command on a place that holds no state.
    package static func noState(_ place: StatePlace) -> StateAccessError {
        guard place.databaseFile != nil else {
            return StateAccessError(
                description: "\(place) holds no Trellis state yet (no Trellis tables in that database): "
                    + "`trellis run --store` makes one on its first start, as do `trellis catalog import --store` and "
                    + "`trellis store copy --from DIRECTORY --to URL` from an SQLite state; another state is named with --state, "
                    + "--store or --config")
        }
        return StateAccessError(
            description: "\(place) holds no Trellis state yet (no \(SQLiteStore.fileName) there): "
                + "`trellis run` makes one on its first start, as do `trellis plants import-host`, `trellis catalog import` "
                + "and `trellis store restore`; another state is named with --state, --store or --config")
    }

    package static func relayRunning(_ directory: String) -> StateAccessError {
        StateAccessError(description: "a relay is running on \(directory); stop it first")
    }
}

/// What a command holds while it uses a state: for an SQLite state being changed, its directory's
/// lock. Released by ``release()``, or by the kernel when the process ends (`trellis run` keeps it).
package struct StateHold {
    package let place: StatePlace
    private let lock: Int32?

    /// Readies `place` for `use` (see ``StateUse``): checks that a state is there to read, or makes
    /// the directory and takes the lock. A PostgreSQL store needs neither: connecting tells.
    package static func take(_ place: StatePlace, for use: StateUse) throws(StateAccessError) -> StateHold {
        guard case let .sqlite(directory) = place else { return StateHold(place: place, lock: nil) }
        let exclusive: Bool
        switch use {
        case .read:
            guard let file = place.databaseFile, FileManager.default.fileExists(atPath: file) else {
                throw StateAccessError.noState(place)
            }
            return StateHold(place: place, lock: nil)
        case .changeBesideRelays: exclusive = false
        case .changeAlone: exclusive = true
        }
        if let problem = Self.makeDirectory(directory) {
            throw StateAccessError(description: "cannot make the state directory \(directory): \(problem)")
        }
        let path = (directory as NSString).appendingPathComponent("trellis.lock")
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StateAccessError(description: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, exclusive ? LOCK_EX | LOCK_NB : LOCK_SH) == 0 else {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK { throw StateAccessError.relayRunning(directory) }
            throw StateAccessError(description: "cannot lock \(path): \(String(cString: strerror(code)))")
        }
        return StateHold(place: place, lock: fd)
    }

    /// Lets go of the lock, if one is held.
    package func release() {
        guard let lock else { return }
        flock(lock, LOCK_UN)
        close(lock)
    }

    /// Makes `path` and its missing parents (as `mkdir -p`); nil when done, else what stands in the
    /// way in the system's words (`Permission denied`) or as the file that is not a directory.
    package static func makeDirectory(_ path: String) -> String? {
        var made = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            made += component
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: made, isDirectory: &isDirectory) {
                guard isDirectory.boolValue else { return "\(made) is not a directory" }
            } else if mkdir(made, 0o777) != 0 && errno != EEXIST {
                return "\(made): \(String(cString: strerror(errno)))"
            }
            made += "/"
        }
        return nil
    }
}
