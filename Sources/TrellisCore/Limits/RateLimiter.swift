#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A rate a client may keep up: `rate` messages a second on average, `burst` at once.
public struct RateLimit: Sendable, Hashable {
    /// Messages a second a key earns back; 0 or less turns the limit off.
    public var rate: Double
    /// Messages a key may send at once after a pause (the bucket's size), at least 1.
    public var burst: Int

    public init(rate: Double, burst: Int) {
        self.rate = rate
        self.burst = max(1, burst)
    }

    /// Whether the limit refuses anything at all.
    public var isOn: Bool { rate > 0 && rate.isFinite }

    /// One relay's part of this limit when `relays` relays of a share group share it: the broker
    /// hands a shared subscription's messages to the group's relays in turn, so each sees about
    /// one in `relays` of a client's messages, and a part of `1/relays` of the rate and the burst
    /// (rounded up, at least 1) keeps the group near the limit instead of `relays` times it.
    public func share(among relays: Int) -> RateLimit {
        guard relays > 1 else { return self }
        let parts = Double(relays)
        return RateLimit(rate: rate / parts, burst: Int((Double(burst) / parts).rounded(.up)))
    }
}

/// What ``RateLimiter`` decided for one message.
public enum RateVerdict: Sendable, Equatable {
    /// Within the rate: handle the message.
    case allowed
    /// Over the rate: refuse it. `first` is true for the first refusal after an allowed message
    /// (a refusal that starts a run), and `retryAfter` is the seconds until one more is allowed.
    case refused(first: Bool, retryAfter: Double)
}

/// A token bucket per key (a client, a device), as a pure value: each key holds up to
/// `burst` tokens, earns `rate` a second, and spends one per message; a message finding no
/// token is refused, and costs nothing, so a key that keeps flooding gets its rate and no more.
///
/// Memory is bounded by the keys active within one refill: a key whose bucket has filled again
/// holds nothing a fresh one would not, so it is forgotten (swept at most once per refill time).
public struct RateLimiter: Sendable {
    /// The limit every key gets.
    public let limit: RateLimit

    private struct Bucket: Sendable {
        var tokens: Double
        var updated: Date
        var refusing = false
    }

    private var buckets: [String: Bucket] = [:]
    private var lastSweep: Date?

    public init(_ limit: RateLimit) {
        self.limit = limit
    }

    /// Keys holding a bucket now; exposed so memory bounds can be checked.
    public var trackedKeys: Int { buckets.count }

    /// Seconds an empty bucket takes to fill again.
    public var refillTime: Double { limit.isOn ? Double(limit.burst) / limit.rate : 0 }

    /// Counts one message of `key` at `now` and says whether it may pass.
    public mutating func admit(_ key: String, at now: Date) -> RateVerdict {
        guard limit.isOn else { return .allowed }
        sweepIfDue(now)
        let burst = Double(limit.burst)
        var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
        let elapsed = max(0, now.timeIntervalSince(bucket.updated))
        bucket.tokens = min(burst, bucket.tokens + elapsed * limit.rate)
        bucket.updated = max(bucket.updated, now)
        let verdict: RateVerdict
        if bucket.tokens >= 1 {
            bucket.tokens -= 1
            bucket.refusing = false
            verdict = .allowed
        } else {
            verdict = .refused(first: !bucket.refusing, retryAfter: (1 - bucket.tokens) / limit.rate)
            bucket.refusing = true
        }
        buckets[key] = bucket
        return verdict
    }

    /// Forgets every key whose bucket is full again at `now`.
    public mutating func prune(at now: Date) {
        let refill = refillTime
        buckets = buckets.filter { now.timeIntervalSince($0.value.updated) < refill }
        lastSweep = now
    }

    private mutating func sweepIfDue(_ now: Date) {
        guard let last = lastSweep else {
            lastSweep = now
            return
        }
        if now.timeIntervalSince(last) >= max(1, refillTime) || now < last {
            prune(at: now)
        }
    }
}
