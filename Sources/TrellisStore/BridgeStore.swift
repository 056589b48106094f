import Foundation
import TrellisCore

/// The queue of a bridge's store and forward: a message an `out` rule takes is kept here, in the
/// same transaction as the mark of its delivery, before the local broker has it acknowledged, and
/// leaves only once the upstream broker acknowledged it. Order is the queue's: the id a message
/// is given when it is kept.
public protocol BridgeStore: Sendable {
    /// Keeps a message for `bridge`, already on the topic it is to have upstream.
    func enqueueForward(
        bridge: String, topic: String, payload: [UInt8], qos: Int, retain: Bool, at time: Date
    ) async throws

    /// Up to `limit` messages of `bridge` after the one with id `after`, oldest first.
    func forwards(bridge: String, after id: Int64, limit: Int) async throws -> [ForwardWindow.Message]

    /// Forgets the messages `ids` of `bridge`: the upstream broker has them.
    func deleteForwards(bridge: String, ids: [Int64]) async throws

    /// How many messages of `bridge` wait, and their bytes.
    func forwardBacklog(bridge: String) async throws -> (messages: Int, bytes: Int)

    /// When the oldest message of `bridge` that waits was kept; nil when none waits.
    func oldestForward(bridge: String) async throws -> Date?

    /// Holds the queue of `bridge` to its bounds, oldest first, in one transaction: drops the
    /// messages kept before `storedBefore`, then the oldest until the payloads left take at most
    /// `maxBytes`. Returns what each bound dropped and what is left.
    func trimForwards(bridge: String, maxBytes: Int, storedBefore: Date) async throws -> ForwardTrim
}

/// What ``BridgeStore/trimForwards(bridge:maxBytes:storedBefore:)`` did.
public struct ForwardTrim: Sendable, Equatable {
    /// Messages dropped for their age, and to keep the queue's bytes under its bound.
    public var byAge: Int, byBytes: Int
    /// Messages left, and their payloads' bytes.
    public var messages: Int, bytes: Int
    /// When the oldest message left was stored; nil when none is left.
    public var oldest: Date?

    public init(byAge: Int, byBytes: Int, messages: Int, bytes: Int, oldest: Date? = nil) {
        (self.byAge, self.byBytes, self.messages, self.bytes, self.oldest) = (byAge, byBytes, messages, bytes, oldest)
    }
}
