/// Durability controls every store offers: write out what is queued, and close.
public protocol StoreLifecycle: Sendable {
    /// Waits until every queued write is committed; throws the first write failure.
    func flush() async throws
    /// Flushes and releases the database; the store is unusable afterwards.
    func close() async throws
}
