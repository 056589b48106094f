import Foundation
import GRDB

/// What a store says about its writes, for `/health`, the metrics and `trellis/stats`.
public struct StoreWriteStatus: Sendable, Equatable {
    /// False while the latest commit of either path failed and none succeeded since.
    public var writable: Bool
    /// The cause of the current failure (`SQLITE_FULL: database or disk is full`); nil while writable.
    public var error: String?
    /// Commits that failed since the store was opened.
    public var failedCommits: Int
    /// Changes queued behind and not yet committed.
    public var unwrittenChanges: Int
    /// Seconds the oldest of them has waited; nil when none waits.
    public var oldestUnwrittenChangeSeconds: Double?

    public init(writable: Bool, error: String? = nil, failedCommits: Int = 0, unwrittenChanges: Int = 0,
                oldestUnwrittenChangeSeconds: Double? = nil) {
        self.writable = writable
        self.error = error
        self.failedCommits = failedCommits
        self.unwrittenChanges = unwrittenChanges
        self.oldestUnwrittenChangeSeconds = oldestUnwrittenChangeSeconds
    }
}

extension SQLiteStore {
    /// Seconds the oldest queued change has waited in the write-behind buffer.
    public func oldestUnwrittenChangeAge() async -> Double? {
        guard let age = await buffer.oldestUnwrittenAge() else { return nil }
        return Double(age.components.seconds) + Double(age.components.attoseconds) / 1e18
    }

    /// The state of the store's commits now, without writing anything.
    public func writeStatus() async -> StoreWriteStatus {
        let failure = health.currentFailure
        return StoreWriteStatus(
            writable: failure == nil, error: failure.map(StoreWriteHealth.cause(of:)),
            failedCommits: health.failedCommits, unwrittenChanges: buffer.outstanding,
            oldestUnwrittenChangeSeconds: await oldestUnwrittenChangeAge())
    }

    /// Succeeds when a real write commits now, through the path real writes take.
    ///
    /// While the write-behind's commits fail it throws their failure at once (no probe could say
    /// more). Otherwise it queues a probe change (a row of 4 KiB of fresh random bytes, so SQLite
    /// must write pages) in the write-behind buffer, behind every change already queued, and waits
    /// at most `timeout` for its batch to commit: a full disk, a read-only file or a write lock held
    /// elsewhere fail it exactly as they fail a reading or a log line.
    public func checkWritable(timeout: Duration = .seconds(5)) async throws {
        if let failure = health.writeBehindFailure { throw failure }
        if isClosedNow { throw StoreError.closed("checkWritable()") }
        let position = await buffer.append(.probe(at: Date().storeMilliseconds))
        let buffer = self.buffer
        let committed = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await buffer.waitUntilCommitted(through: position, untilFailure: true) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        if committed { return }
        if let failure = health.writeBehindFailure { throw failure }
        throw StoreError(code: .operationFailed, message: "checkWritable() did not commit within \(timeout)")
    }

    public func checkWritable() async throws {
        try await checkWritable(timeout: .seconds(5))
    }
}
