import Foundation

/// A store that writes consistent copies of itself while relays run on it, into a directory,
/// keeping the newest few: the SQLite store (its online backup API). A PostgreSQL store is not one;
/// its database is backed up with `pg_dump` (docs/operations.md).
public protocol StoreBackingUp: Sendable {
    /// Writes a backup of `kind` named for `time` into `directory` (created when missing), then
    /// removes the oldest backups of that kind there beyond the newest `keep`; backups of the other
    /// kind are left alone. Never blocks the store's writer.
    func backup(into directory: String, keep: Int, kind: BackupKind, at time: Date) async throws -> BackupFile
}

extension StoreBackingUp {
    /// A scheduled backup (``BackupKind/scheduled``).
    public func backup(into directory: String, keep: Int, at time: Date) async throws -> BackupFile {
        try await backup(into: directory, keep: keep, kind: .scheduled, at: time)
    }
}

/// Why a backup was taken, which names it and decides the rotation it belongs to: the scheduled
/// (daily) backups are the ones to restore from after a loss, so backups an operator asks for are
/// named apart and rotated apart, and asking many times cannot push a scheduled one out.
public enum BackupKind: String, Sendable, CaseIterable {
    /// Taken every `state.backup.interval` seconds: `trellis-<time>.sqlite`.
    case scheduled
    /// Asked for on `trellis/request/store/backup`: `trellis-requested-<time>.sqlite`.
    case requested

    /// The start of the file names of this kind.
    public var prefix: String {
        switch self {
        case .scheduled: BackupNaming.prefix
        case .requested: BackupNaming.prefix + "requested-"
        }
    }
}

/// One backup written: its file, size and time.
public struct BackupFile: Sendable, Equatable, Encodable {
    /// The file's name in the backup directory, e.g. `trellis-20261127T013000.123Z.sqlite`.
    public var name: String
    public var path: String
    public var bytes: Int
    public var takenAt: Date

    public init(name: String, path: String, bytes: Int, takenAt: Date) {
        (self.name, self.path, self.bytes, self.takenAt) = (name, path, bytes, takenAt)
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
        time.formatted(
            .iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: true)
                .timeSeparator(.colon).timeZone(separator: .omitted))
    }

    /// The file name of a backup of `kind` taken at `time`.
    public static func name(at time: Date, kind: BackupKind = .scheduled) -> String {
        let compact = time.formatted(
            .iso8601.year().month().day().dateSeparator(.omitted)
                .time(includingFractionalSeconds: true).timeSeparator(.omitted).timeZone(separator: .omitted))
        return kind.prefix + compact + suffix
    }

    /// The kind of backup `name` is, nil for any other file.
    public static func kind(of name: String) -> BackupKind? {
        guard name.hasSuffix(suffix) else { return nil }
        if name.hasPrefix(BackupKind.requested.prefix) { return .requested }
        return name.hasPrefix(BackupKind.scheduled.prefix) ? .scheduled : nil
    }

    /// The backups of `kind` among `names` (other files, and backups of the other kind, are left
    /// alone) beyond the newest `keep`, oldest first.
    public static func expired(_ names: [String], keep: Int, kind: BackupKind = .scheduled) -> [String] {
        let backups = names.filter { Self.kind(of: $0) == kind }.sorted()
        return Array(backups.dropLast(max(keep, 1)))
    }
}
