#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What ``SpamGuard`` decided for one message.
public enum SpamVerdict: Sendable, Equatable {
    /// Within the limit: handle the message normally.
    case allowed
    /// The first message over the limit: answer once with `ERR_kickedForSpam`.
    case kicked
    /// A later message while the sender is still over the limit: dead-letter it, send nothing.
    case muted
}

/// A per-sender sliding-window rate limiter, as a pure value type.
///
/// A sender may send at most `limit` messages in any `window` (15 in 15 seconds by default).
/// The first message beyond that is ``SpamVerdict/kicked``, later ones are ``SpamVerdict/muted``
/// until fewer than `limit` of the sender's messages fall inside the last `window` again.
/// Muted messages count too, so a sender that keeps flooding stays muted until it pauses.
///
/// Memory is bounded: at most `limit` timestamps are kept per sender, and senders whose last
/// message is older than `window` are dropped (swept at most once per window).
public struct SpamGuard: Sendable {
    /// The number of messages a sender may send within one window.
    public let limit: Int
    /// The length of the sliding window, in seconds.
    public let window: TimeInterval

    /// One sender's recent message times, oldest first, in `times[head...]`: dropping old times
    /// advances `head` instead of moving the array, and the array is compacted now and then, so
    /// each message costs O(1) however large `limit` is.
    private struct SenderState: Sendable {
        var times: [Date] = []
        var head = 0
        var kicked = false
        /// Messages that may still pass uncounted (see ``SpamGuard/grant(sender:count:)``).
        var allowance = 0

        var count: Int { times.count - head }
        var newest: Date? { head < times.count ? times.last : nil }

        mutating func drop(through cutoff: Date) {
            while head < times.count, times[head] <= cutoff { head += 1 }
            if head > 32, head * 2 > times.count {
                times.removeFirst(head)
                head = 0
            }
        }

        mutating func append(_ time: Date, keeping limit: Int) {
            times.append(time)
            if count > limit { head += count - limit }
        }
    }

    private var senders: [String: SenderState] = [:]
    private var lastSweep: Date?
    /// The sender admitted last and where its state lies in ``senders``: one sender's messages
    /// usually follow each other, and comparing a name costs a fraction of hashing it. Set anew
    /// after a sender is added and cleared when senders are removed; nothing else here may change
    /// the table's layout (a write through the subscript for a missing key may grow it, so
    /// ``grant(sender:count:)`` looks its sender up first).
    private var recent: (sender: String, index: [String: SenderState].Index)?

    /// Creates a guard allowing `limit` messages per `window` seconds per sender.
    public init(limit: Int = 15, window: TimeInterval = 15) {
        precondition(limit > 0, "limit must be positive")
        precondition(window > 0, "window must be positive")
        self.limit = limit
        self.window = window
    }

    /// The number of senders currently tracked; exposed so memory bounds can be checked.
    public var trackedSenders: Int { senders.count }

    /// Records one message from `sender` received at `now` and says how to treat it.
    ///
    /// With `usingAllowance`, a message of a sender that has an allowance left (and is not
    /// kicked) is allowed without being counted, and uses up one of it.
    public mutating func admit(sender: String, at now: Date, usingAllowance: Bool = false) -> SpamVerdict {
        sweepIfDue(now)
        let index: [String: SenderState].Index
        if let recent, recent.sender == sender {
            index = recent.index
        } else if let found = senders.index(forKey: sender) {
            index = found
        } else {
            senders[sender] = SenderState()
            index = senders.index(forKey: sender)!
        }
        recent = (sender, index)
        return Self.admit(&senders.values[index], at: now, limit: limit, window: window, usingAllowance: usingAllowance)
    }

    /// Lets the next `count` messages of `sender` admitted with `usingAllowance` pass uncounted,
    /// replacing what was left of an earlier grant. The plant tracker grants a refresh's index
    /// reads this way: `REQ_numPlants` counts, and the one `REQ_plantInfoOnStartup` per plant the
    /// app sends after it does not, so a refresh costs one message whatever the number of plants.
    /// A grant lives as long as the sender's other state (at most one window without messages).
    public mutating func grant(sender: String, count: Int) {
        guard let index = senders.index(forKey: sender) else { return }
        senders.values[index].allowance = max(0, count)
    }

    /// Updates one sender's state in place (no copy of its times).
    private static func admit(
        _ state: inout SenderState, at now: Date, limit: Int, window: TimeInterval,
        usingAllowance: Bool
    ) -> SpamVerdict {
        state.drop(through: now.addingTimeInterval(-window))
        if usingAllowance, state.allowance > 0, !state.kicked {
            state.allowance -= 1
            return .allowed
        }
        let verdict: SpamVerdict
        if state.count >= limit {
            verdict = state.kicked ? .muted : .kicked
            state.kicked = true
        } else {
            verdict = .allowed
            state.kicked = false
        }
        state.append(now, keeping: limit)
        return verdict
    }

    /// Forgets every sender whose newest message has left the window.
    public mutating func prune(at now: Date) {
        let cutoff = now.addingTimeInterval(-window)
        senders = senders.filter { ($0.value.newest ?? .distantPast) > cutoff }
        recent = nil
        lastSweep = now
    }

    private mutating func sweepIfDue(_ now: Date) {
        guard let last = lastSweep else {
            lastSweep = now
            return
        }
        if now.timeIntervalSince(last) >= window || now < last {
            prune(at: now)
        }
    }
}
