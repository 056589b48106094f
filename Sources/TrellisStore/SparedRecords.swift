import Foundation
import Logging
import Synchronization
import TrellisCore

/// The changes of a write-behind batch that only spare work later, kept when the store can keep
/// them: the ids a bridge's receiver carried in (``BufferedWrite/carriedIn(bridge:origin:sequence:forgettingPast:)``),
/// whose loss lets one copy of a message pass, never loses one.
///
/// Every message the relay handles waits for its batch to commit, so a record of this kind must not
/// hold a batch back: a store writes them last in the batch's transaction, under a savepoint, and
/// when the database refuses them (a table damaged or dropped, rights taken from the account, a
/// constraint or a trigger: each store names the errors it takes as a refusal) rolls back to the
/// savepoint and commits the rest. A failure of the store itself (a lost connection, a full disk, a
/// busy or read-only database, a deadlock, a cancellation) still fails the whole batch, which is
/// tried again as any. Skipped records are logged as a warning at most once a minute, with how many
/// were skipped since the last line.
///
/// Only a record queued on its own is spared: one made while handling a delivery would be queued
/// with the delivery's mark (`.marked`), which must commit, and is written as any change is. The
/// bridge's receiver records outside any delivery's handling.
package final class SparedRecords: Sendable {
    private struct State {
        var throttle = NoticeThrottle()
        var skipped = 0
    }

    private let logger: Logger
    private let state = Mutex(State())

    package init(logger: Logger) {
        self.logger = logger
    }

    /// The batch split into the writes that must commit, in their order, and the records it may skip.
    package static func split(_ batch: [BufferedWrite]) -> (required: [BufferedWrite], spared: [BufferedWrite]) {
        // The usual batch has none: handed back as it is, not copied.
        guard batch.contains(where: { if case .carriedIn = $0 { true } else { false } }) else { return (batch, []) }
        var required: [BufferedWrite] = []
        var spared: [BufferedWrite] = []
        required.reserveCapacity(batch.count)
        for item in batch {
            if case .carriedIn = item { spared.append(item) } else { required.append(item) }
        }
        return (required, spared)
    }

    /// Notes `count` records not kept because the store refused them, for `reason` (the store's own
    /// description of its error, which names the cause).
    package func skipped(_ count: Int, because reason: String, at now: Date = Date()) {
        let line = state.withLock { state -> Int? in
            state.skipped += count
            guard state.throttle.notice("skipped", at: now) != nil else { return nil }
            defer { state.skipped = 0 }
            return state.skipped
        }
        guard let line else { return }
        logger.warning(
            "could not keep the ids of messages carried in by a bridge; the batch's other changes are committed, and a copy of those messages may pass once",
            metadata: ["skipped": "\(line)", "error": "\(reason)"])
    }

    /// Records skipped since the last line was logged.
    package var skippedSinceLastLine: Int { state.withLock { $0.skipped } }
}
