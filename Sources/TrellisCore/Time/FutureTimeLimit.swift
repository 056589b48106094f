#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How far into the future a message may date itself: a press's stated time, a reading's `at`, a
/// log line's `timestamp`. Each store keeps the newest by such a time, so a single message dated
/// `9999-01-01T00:00:00Z` would stay the newest for ever and hide every real one after it. A
/// stated time more than ``maxSkew`` seconds ahead of the relay's clock is refused instead
/// (dead-lettered as ``reason``); a little skew is allowed, since a device's clock is rarely
/// exactly the relay's.
public struct FutureTimeLimit: Sendable, Hashable {
    /// The dead-letter reason of a refused time.
    public static let reason = "future_time"
    /// The default skew allowed: five minutes.
    public static let defaultMaxSkew: TimeInterval = 300

    /// Seconds a stated time may lie ahead of the time of receipt; 0 allows none.
    public var maxSkew: TimeInterval

    public init(maxSkew: TimeInterval = FutureTimeLimit.defaultMaxSkew) {
        self.maxSkew = max(0, maxSkew)
    }

    /// The latest time a message received at `now` may state.
    public func latestAllowed(at now: Date) -> Date {
        now.addingTimeInterval(maxSkew)
    }

    /// Judges `stated` against `now`, the time the message was received (the capture's clock
    /// when replaying). A missing time stands for the time of receipt and is always accepted.
    public func judge(_ stated: Date?, now: Date) -> FutureTimeVerdict {
        guard let stated else { return .accepted }
        let ahead = stated.timeIntervalSince(now)
        return ahead > maxSkew ? .tooFarAhead(by: ahead) : .accepted
    }

    /// Whether a message received at `now` may state `stated`.
    public func admits(_ stated: Date?, now: Date) -> Bool {
        judge(stated, now: now) == .accepted
    }
}

/// What ``FutureTimeLimit/judge(_:now:)`` decided.
public enum FutureTimeVerdict: Sendable, Hashable {
    /// Within the allowed skew, in the past, or not stated at all.
    case accepted
    /// More than the allowed skew ahead of the relay's clock, by this many seconds.
    case tooFarAhead(by: TimeInterval)
}
