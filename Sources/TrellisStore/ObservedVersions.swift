import Synchronization

/// What the handling of one message has learned of a shared store's state: for each kind of data,
/// the newest version of it (a count of committed changes) a statement made for this message saw.
///
/// A store shared by several relays cannot keep an answer until its own next write: another relay
/// may change the data at any time. It can keep an answer tagged with the version it was read at,
/// and give it again to a message whose handling has seen no newer version: every change committed
/// before the message arrived is then in the answer. The relay binds a fresh value to
/// ``current`` for each message it handles; the PostgreSQL store notes in it the version its spam
/// admission (one round trip the message makes anyway) read, so the read that follows needs none.
/// Without a value bound, or without a version noted, a shared store reads the database.
public final class ObservedVersions: Sendable {
    private let versions = Mutex<[String: Int64]>([:])

    public init() {}

    /// The version of the message in hand, bound by the relay while it handles it.
    @TaskLocal public static var current: ObservedVersions?

    /// The newest version of `kind` seen, if any.
    public func version(of kind: String) -> Int64? {
        versions.withLock { $0[kind] }
    }

    /// Notes that `version` of `kind` was seen (a lower one than already noted changes nothing).
    public func saw(_ version: Int64, of kind: String) {
        versions.withLock { $0[kind] = max($0[kind] ?? version, version) }
    }
}
