import Foundation

/// A store's spell of failing commits as a value: each commit's outcome goes in, and what to say
/// about it comes out. ``StoreWriteHealth`` is its driver (the clock, the log, the timer).
///
/// A spell starts at the first failure on either commit path and ends once both paths' latest
/// commits succeeded *and* no commit failed for ``settle`` after that. Without the settling, a
/// store that only partly works (a full disk whose WAL checkpoint frees a few pages, a server that
/// accepts one connection in three) would log "commits again" and "cannot commit" in turns, once
/// per flap; with it, an outage is one error per kind of failure and one recovery, however it
/// flaps, and the recovery's figures cover the whole spell.
package struct CommitSpell: Sendable {
    /// What the driver must do after an event.
    package enum Action: Equatable, Sendable {
        /// Log the failure: the first of its kind in this spell.
        case reportFailure(kind: String)
        /// Call ``settleCheck(at:)`` after this long.
        case checkSettled(after: Duration)
        /// Log the recovery: the spell lasted `lasted` (from its first failure to the success that
        /// ended it) and `failures` commits failed in it.
        case reportRecovery(lasted: Duration, failures: Int)
    }

    /// How long commits must go without a failure, after both paths succeeded, for the spell to end.
    package let settle: Duration
    private var failingPaths: Set<StoreWriteHealth.Path> = []
    private var started: ContinuousClock.Instant?
    private var failures = 0
    private var kindsReported: Set<String> = []
    /// When both paths last became healthy in this spell, while no failure followed.
    private var healthySince: ContinuousClock.Instant?

    package init(settle: Duration) {
        self.settle = settle
    }

    /// Whether a spell is under way (including its settling).
    package var isOpen: Bool { started != nil }

    /// A commit on `path` failed with a failure of `kind`.
    package mutating func failed(kind: String, on path: StoreWriteHealth.Path, at now: ContinuousClock.Instant)
        -> Action?
    {
        if started == nil { started = now }
        failures += 1
        healthySince = nil
        failingPaths.insert(path)
        return kindsReported.insert(kind).inserted ? .reportFailure(kind: kind) : nil
    }

    /// A commit on `path` succeeded.
    package mutating func succeeded(on path: StoreWriteHealth.Path, at now: ContinuousClock.Instant) -> Action? {
        guard failingPaths.remove(path) != nil, failingPaths.isEmpty, started != nil else { return nil }
        healthySince = now
        return .checkSettled(after: settle)
    }

    /// The time asked for by ``Action/checkSettled(after:)`` has passed: the spell ends if nothing
    /// failed since.
    package mutating func settleCheck(at now: ContinuousClock.Instant) -> Action? {
        guard let healthySince, now - healthySince >= settle else { return nil }
        return end()
    }

    /// The store is closing: a spell whose paths both succeeded last ends now, without waiting out
    /// the settle time (no commit will come to fail); one still failing stays unreported as over.
    package mutating func closing() -> Action? {
        end()
    }

    private mutating func end() -> Action? {
        guard let started, let healthySince, failingPaths.isEmpty else { return nil }
        let action = Action.reportRecovery(lasted: healthySince - started, failures: failures)
        self = CommitSpell(settle: settle)
        return action
    }
}
