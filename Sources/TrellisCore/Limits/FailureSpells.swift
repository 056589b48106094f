#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// When to log an operation that a loop tries again and again while it fails (a read of the store
/// every 100 ms while the store is away): its first failure, then at most one line per ``interval``
/// with how many failed without a line since, and once when it works again with how many failed in
/// all. An outage is then two or three lines, not ten a second. The operations are the caller's few
/// names, so what is kept stays small.
public struct FailureSpells: Sendable {
    /// What to log for a failure.
    public enum Notice: Sendable, Equatable {
        /// The failure that starts a spell.
        case first
        /// A reminder, an ``interval`` or more after the last line, with the failures since that had none.
        case again(unlogged: Int)
    }

    private struct Spell {
        var failures = 1
        var logged: Date
        var unlogged = 0
    }

    /// Seconds between two lines of one operation's spell.
    public let interval: Double
    private var spells: [String: Spell] = [:]

    public init(interval: Double = 60) {
        self.interval = interval
    }

    /// `operation` failed at `now`: what to log, nil for nothing.
    public mutating func failed(_ operation: String, at now: Date) -> Notice? {
        guard var spell = spells[operation] else {
            spells[operation] = Spell(logged: now)
            return .first
        }
        spell.failures += 1
        defer { spells[operation] = spell }
        // A clock stepped back counts as time passed, so a line is never held back for long.
        guard now.timeIntervalSince(spell.logged) >= interval || now < spell.logged else {
            spell.unlogged += 1
            return nil
        }
        defer { (spell.logged, spell.unlogged) = (now, 0) }
        return .again(unlogged: spell.unlogged)
    }

    /// `operation` worked: how many times it failed in the spell this ends; nil when it was not failing.
    public mutating func succeeded(_ operation: String) -> Int? {
        spells.removeValue(forKey: operation)?.failures
    }
}
