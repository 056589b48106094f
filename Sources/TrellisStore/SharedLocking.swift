/// A lock every relay sharing a store takes by name: what one relay does while holding it, no
/// other relay does at the same time. Only a store several relays can share offers it.
public protocol SharedLocking: Sendable {
    /// Runs `body` while holding the lock named `name` (waiting for it while another relay holds it).
    func withSharedLock<T: Sendable>(_ name: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T
}
