import Foundation
import Logging
import Synchronization

/// Whether a store's commits succeed, and the figures `/health`, the metrics and `trellis/stats`
/// report about them. Store-independent: a store reports each commit's outcome here, and this
/// type decides what is loud.
///
/// A failing store is loud once per kind of failure and once on recovery: the first failure of a
/// kind (`SQLITE_FULL`, `SQLITE_BUSY`, `SQLITE_READONLY`, …) in a spell of failures logs an error
/// with its cause; the end of the spell logs how long it lasted and how many commits failed in it.
/// Retries that fail the same way again stay quiet (they are counted). A spell ends once commits
/// have succeeded for ``settle`` without a failure (``CommitSpell``), so a store that flaps while
/// it is only partly back is still one outage in the log; `/readyz` and the write status follow
/// each commit's outcome at once.
///
/// Two paths commit: the write-behind buffer (``WriteBehindBuffer``) and the store's direct
/// transactions. The store is failing while either path's latest commit failed; a success on one
/// path does not hide a failure on the other.
public final class StoreWriteHealth: Sendable {
    /// Which commit path an outcome belongs to.
    public enum Path: Sendable, Hashable {
        /// Batches of the write-behind buffer.
        case writeBehind
        /// One-off transactions run while handling a message.
        case direct
    }

    private struct State {
        var writeBehindFailure: (any Error)?
        var directFailure: (any Error)?
        var failedCommits = 0
        var spell: CommitSpell
    }

    /// How long commits must succeed without a failure for an outage to be logged as over.
    public static let settle: Duration = .seconds(2)

    private let state: Mutex<State>
    private let logger: Logger

    /// A tracker logging through `logger`; an outage ends once commits succeeded for `settle`.
    public init(logger: Logger = Logger(label: "trellis.store"), settle: Duration = StoreWriteHealth.settle) {
        self.logger = logger
        self.state = Mutex(State(spell: CommitSpell(settle: settle)))
    }

    /// The failure that makes the store unwritable now: the write-behind's first, else the direct
    /// path's; nil while both paths' latest commits succeeded.
    public var currentFailure: (any Error)? {
        state.withLock { $0.writeBehindFailure ?? $0.directFailure }
    }

    /// The failure of the write-behind's latest commit, while it has not succeeded since.
    public var writeBehindFailure: (any Error)? {
        state.withLock { $0.writeBehindFailure }
    }

    /// Commits that failed since the store was opened, over both paths.
    public var failedCommits: Int {
        state.withLock { $0.failedCommits }
    }

    /// A commit on `path` failed with `error`; `unwritten` changes wait behind it. `waiting`: the
    /// direct operation is tried again until the store answers.
    public func failed(_ error: any Error, on path: Path, unwritten: Int, waiting: Bool = false) {
        let kind = Self.kind(of: error)
        let action = state.withLock { state -> CommitSpell.Action? in
            state.failedCommits += 1
            switch path {
            case .writeBehind: state.writeBehindFailure = error
            case .direct: state.directFailure = error
            }
            return state.spell.failed(kind: kind, on: path, at: .now)
        }
        guard action == .reportFailure(kind: kind) else { return }
        let consequence =
            switch path {
            case .writeBehind: "the batch is kept and retried; the messages behind it stay unacknowledged"
            case .direct where waiting:
                "the operation is tried again until the store answers; the message being handled waits unacknowledged, reading paused"
            case .direct: "the operation fails (a message being handled is refused with a store_error dead letter)"
            }
        logger.error(
            "the state store cannot commit: \(Self.cause(of: error)); \(consequence)",
            metadata: [
                "cause": "\(kind)", "error": "\(error)", "unwritten_changes": "\(unwritten)"
            ])
    }

    /// A commit on `path` succeeded.
    public func succeeded(on path: Path) {
        let action = state.withLock { state -> CommitSpell.Action? in
            switch path {
            case .writeBehind:
                guard state.writeBehindFailure != nil else { return nil }
                state.writeBehindFailure = nil
            case .direct:
                guard state.directFailure != nil else { return nil }
                state.directFailure = nil
            }
            return state.spell.succeeded(on: path, at: .now)
        }
        guard case .checkSettled(let wait) = action else { return }
        Task { [self] in
            try? await Task.sleep(for: wait)
            settleCheck()
        }
    }

    /// Ends the spell if no commit failed since both paths succeeded, logging the recovery.
    private func settleCheck() {
        report(state.withLock { $0.spell.settleCheck(at: .now) })
    }

    /// The store is closing: a recovery not yet settled is logged now, so a relay stopped right
    /// after its store came back still says so.
    public func closing() {
        report(state.withLock { $0.spell.closing() })
    }

    private func report(_ action: CommitSpell.Action?) {
        guard case .reportRecovery(let lasted, let failures) = action else { return }
        let seconds = Double(lasted.components.seconds) + Double(lasted.components.attoseconds) / 1e18
        logger.notice(
            "the state store commits again",
            metadata: [
                "failed_for_s": "\(String(format: "%.1f", seconds))", "failed_commits": "\(failures)"
            ])
    }

    /// ``StoreError/kind`` of `error`, or its type's name for other errors.
    public static func kind(of error: any Error) -> String {
        (error as? StoreError)?.kind ?? String(describing: type(of: error))
    }

    /// ``StoreError/cause`` of `error`, or its description for other errors.
    public static func cause(of error: any Error) -> String {
        (error as? StoreError)?.cause ?? String(describing: error)
    }
}

/// How long to wait before retrying a failed commit: 50 ms, doubling to at most 2 s.
public struct RetryPolicy: Sendable {
    public var first: Duration
    public var limit: Duration

    public init(first: Duration = .milliseconds(50), limit: Duration = .seconds(2)) {
        self.first = first
        self.limit = limit
    }

    /// The wait after `failures` failures in a row (1 or more).
    public func delay(afterFailures failures: Int) -> Duration {
        var delay = first
        for _ in 1..<max(1, min(failures, 32)) where delay < limit { delay *= 2 }
        return min(delay, limit)
    }
}
