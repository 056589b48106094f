import Foundation
import TrellisCore

/// The queue of a bridge's store and forward: a message an `out` rule takes is kept here, in the
/// same transaction as the mark of its delivery, before the local broker has it acknowledged, and
/// leaves only once the upstream broker acknowledged it. Order is the queue's: the id a message
/// is given when it is kept.
public protocol BridgeStore: Sendable {
    /// Keeps a message for `bridge`, already on the topic it is to have upstream, taken by the `out`
    /// rule named `rule` (its topic filter), by which the queue and its drops are counted. Written
    /// behind, in a batch with the delivery's mark (the write-behind rule: the message is
    /// acknowledged once the batch committed); reads see it once committed (``StoreLifecycle/flush()``).
    func enqueueForward(
        bridge: String, rule: String, topic: String, payload: [UInt8], qos: Int, retain: Bool, at time: Date
    ) async throws

    /// Calls `told` after each batch that kept messages for `bridge` commits in this process, until
    /// the observation returned ends (or is released; a commit telling at that moment may still call
    /// it once): the forwarder's word that there is something
    /// to read, so a message goes as soon as it is kept. What a peer of a share group keeps on the
    /// same PostgreSQL state is found only at the forwarder's look at the queue. `told` is called
    /// from the committing task: it must be quick.
    func observeForwardsKept(bridge: String, _ told: @escaping @Sendable () -> Void) -> ForwardsKeptObservation

    /// Up to `limit` messages of `bridge` after the one with id `after`, oldest first.
    func forwards(bridge: String, after id: Int64, limit: Int) async throws -> [ForwardWindow.Message]

    /// Forgets the messages `ids` of `bridge`: the upstream broker has them.
    func deleteForwards(bridge: String, ids: [Int64]) async throws

    /// How many messages of `bridge` wait, and their bytes, by the rule that kept them.
    func forwardBacklogByRule(bridge: String) async throws -> [String: QueuedForwards]

    /// The identity of this state, made at random when it was created and never changed: part of
    /// the origin of the ids its bridges give (``BridgeMessageID``), so that a relay on a new
    /// state, whose queues number from 1 again, sends ids no receiver has seen.
    func stateIdentity() async throws -> String

    /// When the oldest message of `bridge` that waits was kept; nil when none waits.
    func oldestForward(bridge: String) async throws -> Date?

    /// Holds the queue of `bridge` to its bounds, oldest first, in one transaction: drops the
    /// messages kept before `storedBefore`, then the oldest until the payloads left take at most
    /// `maxBytes`. The messages `spared` (those the forwarder has read and will send) stay past both
    /// bounds and are not counted as dropped. Returns what each bound dropped
    /// and what is left.
    func trimForwards(bridge: String, maxBytes: Int, storedBefore: Date, sparing spared: [Int64]) async throws
        -> ForwardTrim
}

extension BridgeStore {
    /// ``trimForwards(bridge:maxBytes:storedBefore:sparing:)`` sparing none.
    public func trimForwards(bridge: String, maxBytes: Int, storedBefore: Date) async throws -> ForwardTrim {
        try await trimForwards(bridge: bridge, maxBytes: maxBytes, storedBefore: storedBefore, sparing: [])
    }

    /// How many messages of `bridge` wait, and their bytes, all rules together.
    public func forwardBacklog(bridge: String) async throws -> (messages: Int, bytes: Int) {
        let total = try await forwardBacklogByRule(bridge: bridge).values.reduce(QueuedForwards(), +)
        return (total.messages, total.bytes)
    }
}

/// What waits in a bridge's queue, or a part of it: messages and their payloads' bytes.
public struct QueuedForwards: Sendable, Equatable {
    public var messages: Int, bytes: Int

    public init(messages: Int = 0, bytes: Int = 0) {
        (self.messages, self.bytes) = (messages, bytes)
    }

    public static func + (lhs: Self, rhs: Self) -> Self {
        Self(messages: lhs.messages + rhs.messages, bytes: lhs.bytes + rhs.bytes)
    }
}

/// What ``BridgeStore/trimForwards(bridge:maxBytes:storedBefore:)`` did.
public struct ForwardTrim: Sendable, Equatable {
    /// Messages dropped for their age, and to keep the queue's bytes under its bound.
    public var byAge: Int, byBytes: Int
    /// Messages left, and their payloads' bytes.
    public var messages: Int, bytes: Int
    /// When the oldest message left was stored; nil when none is left.
    public var oldest: Date?
    /// The same by the rule that kept the messages (its topic filter): only rules with messages
    /// before the trim.
    public var rules: [String: Rule]

    /// One rule's part of a trim.
    public struct Rule: Sendable, Equatable {
        public var byAge: Int, byBytes: Int
        public var left: QueuedForwards

        public init(byAge: Int = 0, byBytes: Int = 0, left: QueuedForwards = QueuedForwards()) {
            (self.byAge, self.byBytes, self.left) = (byAge, byBytes, left)
        }
    }

    public init(
        byAge: Int, byBytes: Int, messages: Int, bytes: Int, oldest: Date? = nil, rules: [String: Rule] = [:]
    ) {
        (self.byAge, self.byBytes, self.messages, self.bytes, self.oldest) = (byAge, byBytes, messages, bytes, oldest)
        self.rules = rules
    }

    /// A trim made of its rules' parts.
    public init(rules: [String: Rule], oldest: Date?) {
        let parts = rules.values
        self.init(
            byAge: parts.reduce(0) { $0 + $1.byAge }, byBytes: parts.reduce(0) { $0 + $1.byBytes },
            messages: parts.reduce(0) { $0 + $1.left.messages }, bytes: parts.reduce(0) { $0 + $1.left.bytes },
            oldest: oldest, rules: rules)
    }
}
