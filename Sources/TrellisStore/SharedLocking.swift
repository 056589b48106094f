/// A lock every relay sharing a store takes by name: what one relay does while holding it, no
/// other relay does at the same time. Only a store several relays can share offers it.
public protocol SharedLocking: Sendable {
    /// Runs `body` while holding the lock named `name` (waiting for it while another relay holds it).
    /// When the lock may have been lost while `body` ran (the store's session ended under it), `body` runs
    /// again under the lock taken anew: it must be safe to run twice.
    func withSharedLock<T: Sendable>(_ name: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T
}

/// A lease at most one relay of those sharing a store holds at a time, for as long as its
/// connection to the store lasts: for work only one of them may do, for long (a bridge's
/// forwarding). Only a store several relays can share offers it.
public protocol StoreLeases: Sendable {
    /// Runs `body` while holding the lease named `name`, when no one holds it: true once `body` has
    /// returned, false at once (`body` not run) while another holds it. `body` is cancelled as
    /// soon as the lease may be lost (the store's connection closed or stopped answering), so it
    /// does not go on once another relay can take the lease.
    func withLease(_ name: String, _ body: @escaping @Sendable () async -> Void) async throws -> Bool
}
