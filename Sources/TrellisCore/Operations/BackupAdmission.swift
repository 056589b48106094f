#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Whether a backup of the state may start now. A backup reads the whole database and writes a
/// file as large, so they are kept from piling up: one at a time (a request while one is written
/// is answered at once as busy, not queued behind it), and the ones operators ask for at most one
/// per ``minimumRequestInterval`` seconds, counted from the start of the last one asked for,
/// written or failed (a request sooner is refused, naming when the next is allowed). The schedule
/// is not rate-limited: it waits for a running backup and then takes its own.
///
/// A value: the relay keeps one behind a lock and asks it with the time; the tests ask it directly.
public struct BackupAdmission: Sendable, Hashable {
    /// What asks for a backup.
    public enum Trigger: String, Sendable, Hashable, CaseIterable {
        /// The `state.backup.interval` schedule.
        case schedule
        /// An operator, on `trellis/request/store/backup`.
        case request
    }

    /// The backup being written.
    public struct Running: Sendable, Hashable {
        public var trigger: Trigger
        public var started: Date

        public init(trigger: Trigger, started: Date) {
            self.trigger = trigger
            self.started = started
        }
    }

    /// Seconds between two backups asked for; 0: no wait.
    public var minimumRequestInterval: TimeInterval
    /// The backup being written, nil when none is.
    public private(set) var running: Running?
    /// When the last backup asked for started.
    public private(set) var lastRequest: Date?

    public init(minimumRequestInterval: TimeInterval = 60) {
        self.minimumRequestInterval = max(0, minimumRequestInterval)
    }

    /// What a backup asked for by `trigger` at `now` gets, without changing anything.
    public func decide(_ trigger: Trigger, at now: Date) -> BackupAdmissionDecision {
        if let running { return .busy(running) }
        if trigger == .request, let lastRequest {
            let next = lastRequest.addingTimeInterval(minimumRequestInterval)
            if now < next { return .tooSoon(last: lastRequest, next: next) }
        }
        return .start
    }

    /// Decides as ``decide(_:at:)`` and, when the backup may start, notes it as running (and, for a
    /// request, as the last one asked for). Every `.start` must be followed by ``finish()``.
    public mutating func begin(_ trigger: Trigger, at now: Date) -> BackupAdmissionDecision {
        let decision = decide(trigger, at: now)
        guard decision == .start else { return decision }
        running = Running(trigger: trigger, started: now)
        if trigger == .request { lastRequest = now }
        return decision
    }

    /// The running backup ended, written or failed.
    public mutating func finish() {
        running = nil
    }
}

/// What ``BackupAdmission`` decided.
public enum BackupAdmissionDecision: Sendable, Hashable {
    /// Take the backup.
    case start
    /// Another backup is being written; the request is refused rather than queued behind it.
    case busy(BackupAdmission.Running)
    /// A backup was asked for at `last`; the next may be asked for from `next`.
    case tooSoon(last: Date, next: Date)

    /// The sentence a refused request is answered with, nil for ``start``.
    public var refusal: String? {
        switch self {
        case .start:
            return nil
        case let .busy(running):
            let who = running.trigger == .schedule ? "a scheduled backup" : "a backup asked for"
            return "\(who) is being written since \(ISO8601Time.format(running.started)); ask again once it is done"
        case let .tooSoon(last, next):
            let seconds = Int(next.timeIntervalSince(last).rounded())
            return "a backup was asked for at \(ISO8601Time.format(last)) and at most one is taken every \(seconds) s;"
                + " the next may be asked for from \(ISO8601Time.format(next))"
        }
    }
}
