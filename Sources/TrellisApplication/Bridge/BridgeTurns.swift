import Logging
import TrellisStore

/// Who does one direction of a bridge. A relay alone on its store does it for as long as it runs;
/// the relays of a share group take turns: the one holding the direction's lease in the shared
/// store does it, and the others stand by and ask again every ``retry``. When the holder stops,
/// dies or loses PostgreSQL, its lease ends with its session and another relay takes over within
/// seconds, so exactly one relay of a group speaks for the bridge upstream at a time, under the
/// group's name.
package struct BridgeTurns: Sendable {
    /// The shared store's leases; nil for a relay alone on its store.
    let leases: (any StoreLeases)?
    /// The lease's name: the bridge's, with its direction.
    let lease: String
    /// How long a relay standing by waits before asking for the lease again.
    static let retry: Duration = .seconds(2)

    /// Turns for `direction` (`out` or `in`) of `bridge`: by lease when `group` is set and `store`
    /// offers leases, else always this relay's.
    package init(bridge: String, direction: String, group: String?, store: any TrellisStore) {
        leases = group == nil ? nil : store as? any StoreLeases
        lease = "bridge/\(bridge)/\(direction)"
    }

    /// Whether the relay takes turns with others (and so may stand by).
    package var shared: Bool { leases != nil }

    /// Runs `term` for each of this relay's turns until cancelled: once, for as long as it runs,
    /// when the relay is alone; each time it takes the lease, cancelled when it loses it, otherwise.
    package func run(logger: Logger, _ term: @escaping @Sendable () async -> Void) async {
        guard let leases else {
            await term()
            return
        }
        var standing = false
        var failing = false
        while !Task.isCancelled {
            do {
                if try await leases.withLease(lease, term) {
                    logger.info("gave up the bridge's link", metadata: ["lease": "\(lease)"])
                    standing = false
                } else if !standing {
                    logger.info(
                        "another relay of the share group holds the bridge's link; standing by",
                        metadata: ["lease": "\(lease)"])
                    standing = true
                }
                failing = false
            } catch {
                // Said once an outage: the store's own outage is logged and probed by the relay.
                if !failing {
                    logger.warning(
                        "could not ask the store for the bridge's link: \(error)", metadata: ["lease": "\(lease)"])
                }
                failing = true
            }
            try? await Task.sleep(for: Self.retry)
        }
    }
}
