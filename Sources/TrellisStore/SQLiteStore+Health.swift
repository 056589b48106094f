import GRDB

extension SQLiteStore {
    /// Seconds the oldest queued change has waited in the write-behind buffer.
    public func oldestUnwrittenChangeAge() async -> Double? {
        guard let age = await buffer.oldestUnwrittenAge() else { return nil }
        return Double(age.components.seconds) + Double(age.components.attoseconds) / 1e18
    }

    /// Takes the write lock for an empty immediate transaction: fails when the file is read-only,
    /// the disk is gone or the store is closed.
    public func checkWritable() async throws {
        _ = try await read("checkWritable()") { _ in true }
        do {
            try await writer.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) { .commit }
            }
        } catch {
            throw StoreError.wrap(error, operation: "checkWritable()")
        }
    }
}
