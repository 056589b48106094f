#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Which refusals to log: the first of each key, then at most one per `interval` (a minute by
/// default), with the number passed over in silence since the last. A flood of one client
/// writes one line a minute, and every other client still gets its own first line.
///
/// Memory is bounded: keys whose last line is older than `interval` are forgotten when more
/// than `maximumKeys` are held, and past that the oldest half goes.
public struct NoticeThrottle: Sendable {
    /// Seconds between two lines of one key.
    public let interval: Double
    /// Most keys remembered at once.
    public let maximumKeys: Int

    private struct Entry: Sendable {
        var logged: Date
        var suppressed: Int
    }

    private var entries: [String: Entry] = [:]

    public init(interval: Double = 60, maximumKeys: Int = 4096) {
        self.interval = interval
        self.maximumKeys = max(1, maximumKeys)
    }

    /// Whether a refusal of `key` at `now` is to be logged, and how many were not since the last
    /// line; nil when it is not to be logged.
    public mutating func notice(_ key: String, at now: Date) -> Int? {
        if var entry = entries[key], now.timeIntervalSince(entry.logged) < interval, now >= entry.logged {
            entry.suppressed += 1
            entries[key] = entry
            return nil
        }
        let suppressed = entries[key]?.suppressed ?? 0
        entries[key] = Entry(logged: now, suppressed: 0)
        if entries.count > maximumKeys { forgetOld(at: now) }
        return suppressed
    }

    /// Keys remembered now.
    public var trackedKeys: Int { entries.count }

    private mutating func forgetOld(at now: Date) {
        entries = entries.filter { now.timeIntervalSince($0.value.logged) < interval }
        guard entries.count > maximumKeys else { return }
        let kept = entries.sorted { $0.value.logged > $1.value.logged }.prefix(maximumKeys / 2)
        entries = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
    }
}
