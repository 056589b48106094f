import TrellisCore
import TrellisMQTT

/// The topics a relay reads for itself rather than for a route: declared here once, so that the
/// subscriptions made at start and at a reload, and the two places that take such a message off
/// the routes' path (the network thread's callback and the handling loop), agree.
extension RelaySettings {
    /// A message on one of the relay's own topics: what it is to the relay.
    public enum OwnTopic: Equatable, Sendable {
        /// A share group relay's presence (`online`, `offline`, or empty when it left), by client id.
        case peerStatus(clientID: String)
        /// An operator asks for the watch's stream (``TrafficWatch``).
        case watchRequest
    }

    /// The relay's own subscriptions, beside its routes'. Neither is shared: each relay of a group
    /// streams its own traffic to a watcher, and hears every other relay's presence.
    public var ownSubscriptions: [MQTTSubscription] {
        var subscriptions = [MQTTSubscription(watchRequestTopic, qos: .atMostOnce, noLocal: true)]
        if let peerStatusFilter {
            subscriptions.append(MQTTSubscription(peerStatusFilter, qos: .atLeastOnce, noLocal: true))
        }
        return subscriptions
    }

    /// What `topic` is to the relay itself; nil for a topic of the routes. Every message is asked
    /// this first, so the watch's topic is compared in its two parts, without building it.
    public func ownTopic(_ topic: String) -> OwnTopic? {
        let (bytes, prefix) = (topic.utf8, trellisPrefix.utf8)
        if bytes.starts(with: prefix), bytes.dropFirst(prefix.count).elementsEqual(Self.watchRequestSuffix.utf8) {
            return .watchRequest
        }
        return peer(ofStatusTopic: topic).map { .peerStatus(clientID: $0) }
    }
}
