/// Says when to log refusals of one remote address: the first at once, then at most one line per
/// address and `interval`, carrying how many refusals it stands for. A flood from one address is
/// one log line a minute, not one per request; every refusal is still counted by the caller.
public struct RefusalReport: Sendable {
    public let interval: Double
    /// Addresses tracked at most; beyond, those whose interval has passed are forgotten.
    public let capacity: Int
    private var entries: [String: Entry] = [:]

    private struct Entry {
        var loggedAt: Double
        var heldBack: Int
    }

    public init(interval: Double = 60, capacity: Int = 4096) {
        self.interval = interval
        self.capacity = capacity
    }

    /// Records one refusal of `address` at `now`. Returns the number of refusals the log line due
    /// now stands for (this one and those held back since the last line), or nil to log nothing.
    public mutating func record(_ address: String, now: Double) -> Int? {
        if var entry = entries[address] {
            guard now - entry.loggedAt >= interval else {
                entry.heldBack += 1
                entries[address] = entry
                return nil
            }
            entries[address] = Entry(loggedAt: now, heldBack: 0)
            return entry.heldBack + 1
        }
        if entries.count >= capacity {
            entries = entries.filter { now - $0.value.loggedAt < interval }
        }
        entries[address] = Entry(loggedAt: now, heldBack: 0)
        return 1
    }
}
