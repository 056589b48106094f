import Foundation

/// A store that writes consistent copies of itself while relays run on it, into a directory,
/// keeping the newest few: the SQLite store (its online backup API). A PostgreSQL store is not one;
/// its database is backed up with `pg_dump` (docs/operations.md).
public protocol StoreBackingUp: Sendable {
    /// Writes a backup named for `time` into `directory` (created when missing), then removes the
    /// oldest backups there beyond the newest `keep`. Never blocks the store's writer.
    func backup(into directory: String, keep: Int, at time: Date) async throws -> BackupFile
}

/// One backup written: its file, size and time.
public struct BackupFile: Sendable, Equatable, Encodable {
    /// The file's name in the backup directory, e.g. `trellis-20261127T013000.123Z.sqlite`.
    public var name: String
    public var path: String
    public var bytes: Int
    public var takenAt: Date

    public init(name: String, path: String, bytes: Int, takenAt: Date) {
        self.name = name
        self.path = path
        self.bytes = bytes
        self.takenAt = takenAt
    }

    enum CodingKeys: String, CodingKey {
        case name = "file", bytes
        case takenAt = "taken_at"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(bytes, forKey: .bytes)
        try container.encode(BackupNaming.timestamp(takenAt), forKey: .takenAt)
    }
}

/// How backups are named and which of them a rotation removes: `trellis-<UTC time to the
/// millisecond>.sqlite`, so names sort as their times do.
public enum BackupNaming {
    public static let prefix = "trellis-"
    public static let suffix = ".sqlite"

    /// `2026-11-27T01:30:00.123Z`, the time a backup answer carries.
    public static func timestamp(_ time: Date) -> String {
        time.formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: true)
            .timeSeparator(.colon).timeZone(separator: .omitted))
    }

    /// The file name of a backup taken at `time`.
    public static func name(at time: Date) -> String {
        let compact = time.formatted(.iso8601.year().month().day().dateSeparator(.omitted)
            .time(includingFractionalSeconds: true).timeSeparator(.omitted).timeZone(separator: .omitted))
        return prefix + compact + suffix
    }

    /// The backups among `names` (other files are left alone) beyond the newest `keep`, oldest first.
    public static func expired(_ names: [String], keep: Int) -> [String] {
        let backups = names.filter { $0.hasPrefix(prefix) && $0.hasSuffix(suffix) }.sorted()
        return Array(backups.dropLast(max(keep, 1)))
    }
}
