import Foundation
import Synchronization
import TrellisCore

/// Where the plant tracker's spam limit counts each sender's messages (see ``SpamGuard``).
///
/// The count must be one for the whole installation: with several relays sharing a store, a sender
/// whose messages are spread over them is limited as if one relay got them all. The SQLite store
/// belongs to one relay, so it keeps the window in memory; the PostgreSQL store keeps it in a
/// table that one statement updates.
public protocol SpamLedger: Sendable {
    /// Counts one message of `sender` received `at`, against at most `limit` messages per `window`
    /// seconds, and says how to treat it (see ``SpamGuard/admit(sender:at:usingAllowance:)``).
    func admitMessage(sender: String, at: Date, limit: Int, window: TimeInterval, usingAllowance: Bool) async throws
        -> SpamVerdict
    /// Lets the sender's next `count` messages admitted with `usingAllowance` pass uncounted
    /// (see ``SpamGuard/grant(sender:count:)``).
    func grantAllowance(sender: String, count: Int) async throws
}

/// A ``SpamLedger`` in this process's memory, for a store only one relay uses. A change of the
/// limit or window (a configuration reload) starts the count over.
package final class LocalSpamLedger: Sendable {
    private let guardState = Mutex<SpamGuard?>(nil)

    package init() {}

    package func admit(sender: String, at: Date, limit: Int, window: TimeInterval, usingAllowance: Bool) -> SpamVerdict
    {
        guardState.withLock { state in
            if state == nil || state?.limit != max(1, limit) || state?.window != max(0.001, window) {
                state = SpamGuard(limit: max(1, limit), window: max(0.001, window))
            }
            return state!.admit(sender: sender, at: at, usingAllowance: usingAllowance)
        }
    }

    package func grant(sender: String, count: Int) {
        guardState.withLock { $0?.grant(sender: sender, count: count) }
    }
}
