import Synchronization

/// The discovery configs this run of Trellis has published, per thing (`plant:3`, `button:hall`,
/// `device:pump-1`, `trellis`): what they were built from and their topics. It keeps an unchanged
/// config from being published again on every reading or press, tells which topics to clear when a
/// thing is deleted, and which to clear all at once when discovery is turned off or moved to
/// another prefix. Shared by the engines a configuration reload makes.
public final class DiscoveryLedger: Sendable {
    struct Entry: Sendable {
        /// What the configs were built from (names, model), so a rename rebuilds them.
        var signature: String
        var topics: [String]
    }

    private let entries = Mutex<[String: Entry]>([:])

    public init() {}

    /// Whether `key`'s configs must be (re)built: never published, or built from something else.
    func needs(_ key: String, signature: String) -> Bool {
        entries.withLock { $0[key]?.signature != signature }
    }

    /// Notes that `key`'s configs, built from `signature`, were published on `topics`.
    func record(_ key: String, signature: String, topics: [String]) {
        entries.withLock { $0[key] = Entry(signature: signature, topics: topics) }
    }

    /// Forgets `key`, returning the topics it had.
    func remove(_ key: String) -> [String]? {
        entries.withLock { $0.removeValue(forKey: key)?.topics }
    }

    /// Forgets everything, returning every topic published, sorted.
    func removeAll() -> [String] {
        entries.withLock { entries in
            defer { entries.removeAll() }
            return entries.values.flatMap(\.topics).sorted()
        }
    }

    /// How many things have configs published.
    public var count: Int { entries.withLock { $0.count } }
}
