import Foundation
import TrellisCore

/// The ids of the messages a bridge's receiver carried in from its upstream broker, kept so that a
/// copy arriving after a restart of Trellis (or in another relay's turn of a share group) is still
/// known: the upstream broker sends again what it had no acknowledgement for, and a sending Trellis
/// sends again what it had none for, each under the id the message had the first time.
///
/// A receiver reads the newest ids when its turn starts and records each message once the local
/// broker has acknowledged it. A record is written behind and not waited for: it only spares a
/// copy, so one lost to a crash lets a copy pass (at least once), never loses a message, and the
/// receiver does not wait for a commit per message.
public protocol BridgeCarriedStore: Sendable {
    /// Records, written behind, that `bridge` carried in the message `id`; with `keep`, also forgets
    /// that bridge's ids older than its newest `keep` (reading `keep` rows: asked now and then, not
    /// on every record).
    func recordCarriedIn(bridge: String, id: BridgeMessageID, forgettingPast keep: Int?) async throws

    /// The newest `limit` ids `bridge` carried in, oldest first.
    func carriedIn(bridge: String, limit: Int) async throws -> [BridgeMessageID]
}
