import Foundation

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

    public init(
        writable: Bool, error: String? = nil, failedCommits: Int = 0, unwrittenChanges: Int = 0,
        oldestUnwrittenChangeSeconds: Double? = nil
    ) {
        (self.writable, self.error, self.failedCommits) = (writable, error, failedCommits)
        (self.unwrittenChanges) = (unwrittenChanges)
        self.oldestUnwrittenChangeSeconds = oldestUnwrittenChangeSeconds
    }
}
