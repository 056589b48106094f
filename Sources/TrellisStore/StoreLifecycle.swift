/// Durability controls every store offers: commit what is written behind, wait for it, close.
///
/// Changes written behind follow one rule, the same for every store (see ``WriteBehindBuffer``):
/// a failed commit is retried until it succeeds, never dropped. Each change queued behind has a
/// position; the relay acknowledges a message only once the changes up to the position reached
/// while handling it are committed.
public protocol StoreLifecycle: Sendable {
    /// Waits until every change queued so far is committed. While commits fail it keeps waiting
    /// (they are retried) for at most the store's patience, then throws the failure; the changes
    /// stay queued and keep being retried.
    func flush() async throws
    /// Flushes and releases the database; the store is unusable afterwards. Changes that still
    /// cannot be committed once the patience is spent are given up and the failure thrown: their
    /// messages were never acknowledged, so the broker sends them again.
    func close() async throws
    /// Stops retrying failed commits, for a shutdown while the store cannot write: what is queued
    /// behind and not committed is dropped and every wait for it returns false. The messages behind
    /// those changes were never acknowledged, so the broker sends them again.
    func stopRetrying() async
    /// True once ``stopRetrying()`` ended the waiting out of outages (``OutageWaiting``): an
    /// operation that failed for a reason that passes was not refused, it was not tried again.
    var stoppedWaiting: Bool { get }
    /// Whether a read waits on a server, so that read requests handled side by side overlap their
    /// waits (PostgreSQL: the round trips, and one admission call for a run of them). False for a
    /// database in this process (SQLite), where a task per request to overlap nothing costs more
    /// than it saves (a quarter of the relay's CPU per request with 64 in flight).
    var readsWaitOnServer: Bool { get }
    /// Whether the store's reads consult ``ObservedVersions/current``, so that the relay binds a
    /// fresh value for each message it handles. False for a store no other relay writes (SQLite):
    /// its cache is right until its own next write, and a binding per message would cost the
    /// request path a task-local value and an executor hop for nothing.
    var readsObservedVersions: Bool { get }
    /// The position of the newest change queued behind (0 before any).
    var queuedPosition: UInt64 { get }
    /// True when every change up to `position` is committed.
    func isCommitted(through position: UInt64) -> Bool
    /// ``queuedPosition`` while a change up to it is not committed yet, nil when every queued change
    /// is: the relay asks it after every message, and one call reads both positions.
    var uncommittedPosition: UInt64? { get }
    /// Waits until every change up to `position` is committed, however long its commit keeps
    /// failing. False when the store gave up (closing) or the calling task was cancelled.
    func waitUntilCommitted(through position: UInt64) async -> Bool
}
