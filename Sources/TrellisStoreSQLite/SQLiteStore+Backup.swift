import Dispatch
import Foundation
import GRDB
import TrellisStore

extension SQLiteStore: StoreBackingUp {
    /// Writes what was written behind, then copies one snapshot of the database through SQLite's
    /// online backup API on a thread of its own (the copy reads; the relay's writer goes on), then
    /// rotates the backups of `kind` in the directory. Everything the store accepted before the call
    /// is in the copy.
    public func backup(into directory: String, keep: Int, kind: BackupKind, at time: Date) async throws -> BackupFile {
        try await flush()
        let writer = self.writer
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .utility).async {
                continuation.resume(
                    with: Result {
                        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                        let name = BackupNaming.name(at: time, kind: kind)
                        let path = (directory as NSString).appendingPathComponent(name)
                        let summary = try SQLiteBackup.backup(from: writer, to: path)
                        let present = try FileManager.default.contentsOfDirectory(atPath: directory)
                        for old in BackupNaming.expired(present, keep: keep, kind: kind) {
                            try? FileManager.default.removeItem(
                                atPath: (directory as NSString).appendingPathComponent(old))
                        }
                        return BackupFile(name: name, path: path, bytes: summary.bytes, takenAt: time)
                    })
            }
        }
    }
}
