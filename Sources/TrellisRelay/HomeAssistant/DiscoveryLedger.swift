import Synchronization
import TrellisCore

/// The discovery configs this run of Trellis has published: per discovery (prefix, node base,
/// status topics) the things published under it and what their configs were built from. It keeps
/// an unchanged config from being published again on every reading or press, tells which topics to
/// clear when a thing is deleted, and which to clear all at once when discovery is turned off or
/// moved to another prefix. Shared by the engines a configuration reload makes.
///
/// It keeps no topics: they follow from the thing and the discovery it was published under
/// (``HomeAssistantDiscovery/topics(of:)``). A button costs the ledger its id and an empty
/// signature, about 50 bytes with the table's share, where keeping its two topics cost about 300.
public final class DiscoveryLedger: Sendable {
    /// By the discovery the configs were published under: normally one, for a moment two while a
    /// reload moves discovery and a message handled under the old settings still records.
    private let published = Mutex<[HomeAssistantDiscovery: [DiscoveryThing: String]]>([:])

    public init() {}

    /// Whether `thing`'s configs under `discovery` must be (re)built: never published there, or
    /// built from something else (`signature`: the names and model they show).
    func needs(_ thing: DiscoveryThing, signature: String, under discovery: HomeAssistantDiscovery) -> Bool {
        published.withLock { $0[discovery]?[thing] != signature }
    }

    /// Claims the publishing of `thing`'s configs under `discovery`: true, and noted as published
    /// from `signature`, when ``needs(_:signature:under:)`` would be true. One lock and one lookup,
    /// since a retained state published on every press or reading asks each time.
    func claim(_ thing: DiscoveryThing, signature: String, under discovery: HomeAssistantDiscovery) -> Bool {
        published.withLock { $0[discovery, default: [:]].updateValue(signature, forKey: thing) != signature }
    }

    /// Forgets `thing` under `discovery`; whether it was there.
    func remove(_ thing: DiscoveryThing, under discovery: HomeAssistantDiscovery) -> Bool {
        published.withLock { $0[discovery]?.removeValue(forKey: thing) != nil }
    }

    /// Forgets everything, so that every config is published again (Home Assistant restarted, the
    /// broker may have lost its retained messages, the relays of the group changed).
    func forgetAll() {
        published.withLock { $0.removeAll() }
    }

    /// Forgets everything, returning the topics of every config published, sorted, to clear them.
    func removeAll() -> [String] {
        let taken = published.withLock { published in
            defer { published.removeAll() }
            return published
        }
        return taken.flatMap { discovery, things in things.keys.flatMap(discovery.topics(of:)) }.sorted()
    }

    /// How many things have configs published.
    public var count: Int { published.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}
