import Foundation
import GRDB
import TrellisCore
import TrellisStore

/// Consistent copies of an SQLite state, taken while a relay runs, and their restoring.
///
/// A backup goes through SQLite's online backup API (GRDB's `backup(to:)`) from a connection of its
/// own: it reads one snapshot of the database in one read transaction, which in WAL mode never
/// blocks the relay's writer, so a running relay goes on answering while it is taken. Copying the
/// file instead would miss what is still in the WAL, or catch a page half written.
public enum SQLiteBackup {
    /// What a backup file holds, as `trellis store backup` and `restore` report it.
    public struct Summary: Sendable, Equatable {
        public var path: String
        public var bytes: Int
        /// The schema versions applied in it (the migrations' names).
        public var migrations: [String]
    }

    /// Why a file cannot be restored.
    public struct Refusal: Error, CustomStringConvertible {
        public var description: String
    }

    /// Writes a consistent copy of the state in `directory` to `file` (through a temporary file
    /// beside it, renamed when complete and checked), and returns what it holds.
    public static func backup(stateDirectory directory: String, to file: String) throws -> Summary {
        let source = (directory as NSString).appendingPathComponent(SQLiteStore.fileName)
        guard FileManager.default.fileExists(atPath: source) else {
            throw Refusal(description: "no SQLite state at \(source)")
        }
        var configuration = Configuration()
        configuration.readonly = true
        let reader = try DatabasePool(path: source, configuration: configuration)
        defer { try? reader.close() }
        return try backup(from: reader, to: file)
    }

    /// Writes a consistent copy of what `reader` reads (one snapshot) to `file`, through a temporary
    /// file beside it, checked and renamed when complete.
    static func backup(from reader: some DatabaseReader, to file: String) throws -> Summary {
        let partial = file + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        do {
            let copy = try DatabaseQueue(path: partial)
            try reader.backup(to: copy)
            // One file, whole: the copy leaves WAL mode, so no -wal file is needed beside it, and a
            // read-only open (the check, a restore) leaves none behind.
            try copy.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = DELETE") }
            try copy.close()
            let summary = try check(partial)
            if FileManager.default.fileExists(atPath: file) { try FileManager.default.removeItem(atPath: file) }
            try FileManager.default.moveItem(atPath: partial, toPath: file)
            return Summary(path: file, bytes: summary.bytes, migrations: summary.migrations)
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            throw error
        }
    }

    /// Checks that `file` is a Trellis state this release can use: an SQLite database whose
    /// integrity check passes and whose schema holds no migration this release does not know
    /// (a backup of a newer release is refused, an older one is migrated when first opened).
    public static func check(_ file: String) throws -> Summary {
        guard FileManager.default.fileExists(atPath: file) else { throw Refusal(description: "\(file) does not exist") }
        var configuration = Configuration()
        configuration.readonly = true
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(path: file, configuration: configuration)
        } catch {
            throw Refusal(description: "\(file) is not an SQLite database: \(error)")
        }
        defer { try? queue.close() }
        let (integrity, applied, superseded) = try queue.read { db -> (String, [String], Bool) in
            let integrity =
                (try? String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ")) ?? "unreadable"
            let migrator = StoreSchema.migrator
            return (
                integrity, (try? migrator.appliedIdentifiers(db).sorted()) ?? [],
                (try? migrator.hasBeenSuperseded(db)) ?? false
            )
        }
        guard integrity == "ok" else {
            throw Refusal(description: "\(file) fails SQLite's integrity check: \(integrity)")
        }
        guard !applied.isEmpty else {
            throw Refusal(description: "\(file) holds no Trellis state (no schema version in it)")
        }
        guard !superseded else {
            throw Refusal(
                description:
                    "\(file) was written by a newer release of Trellis (its schema has versions this one does not know); "
                    + "restore it with that release")
        }
        let bytes = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
        return Summary(path: file, bytes: bytes, migrations: applied)
    }

    /// Replaces the state in `directory` with `file`, after ``check(_:)``; the state it replaces
    /// is kept beside it as `trellis.sqlite.before-restore-<time>`, whose path is returned (nil
    /// when there was none). The caller makes sure no relay runs on `directory`.
    public static func restore(_ file: String, intoStateDirectory directory: String, at time: Date = Date()) throws -> (
        Summary, String?
    ) {
        let summary = try check(file)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let target = (directory as NSString).appendingPathComponent(SQLiteStore.fileName)
        var keptAt: String?
        if FileManager.default.fileExists(atPath: target) {
            // Folds the WAL into the file first, so the state kept aside is whole in one file.
            let pool = try DatabasePool(path: target)
            try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
            try pool.close()
            let stamp = Int(time.timeIntervalSince1970)
            let aside = target + ".before-restore-\(stamp)"
            try FileManager.default.moveItem(atPath: target, toPath: aside)
            keptAt = aside
        }
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: target + suffix) }
        let source = try DatabaseQueue(
            path: file,
            configuration: {
                var c = Configuration(); c.readonly = true; return c
            }())
        let restored = try DatabaseQueue(path: target)
        try source.backup(to: restored)
        try restored.close()
        try source.close()
        return (summary, keptAt)
    }
}
