import Foundation
import TrellisCore

/// The ids of the messages a bridge's receiver carried in from its upstream broker, kept so that a
/// copy arriving after a restart of Trellis (or in another relay's turn of a share group) is still
/// known: the upstream broker sends again what it had no acknowledgement for, and a sending Trellis
/// sends again what it had none for, each under the id the message had the first time.
///
/// A receiver reads the newest ids when its turn starts and records each message once the local
/// broker has acknowledged it, before acknowledging it upstream; only the newest `keep` of each
/// bridge are kept, as many as a receiver remembers in memory.
public protocol BridgeCarriedStore: Sendable {
    /// Records that `bridge` carried in the message `id`, and forgets that bridge's oldest ids past
    /// the newest `keep` (now and then, not on every call: the forgetting reads `keep` rows).
    func recordCarriedIn(bridge: String, id: BridgeMessageID, keep: Int) async throws

    /// The newest `limit` ids `bridge` carried in, oldest first.
    func carriedIn(bridge: String, limit: Int) async throws -> [BridgeMessageID]
}

/// How often ``BridgeCarriedStore/recordCarriedIn(bridge:id:keep:)`` forgets: when the row it adds
/// has an id divisible by this, so a bridge keeps between `keep` and `keep` + this many ids.
package let bridgeCarriedPruneEvery: Int64 = 256
