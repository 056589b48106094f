import TrellisCore
import TrellisMQTTTypes

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

    /// What `topic` is to the relay itself; nil for a topic of the routes.
    public func ownTopic(_ topic: String) -> OwnTopic? { OwnTopics(self).kind(of: topic) }
}

/// The relay's own topics, made once per engine (``RelayEngine/ownTopics``): every message is
/// asked about them first, so the question compares ready strings and copies no settings.
public struct OwnTopics: Sendable {
    let watchRequest: String
    /// `trellis/status/` in a share group; nil without one (no status topic is then a peer's).
    let peerStatusPrefix: String?

    public init(_ settings: RelaySettings) {
        watchRequest = settings.watchRequestTopic
        peerStatusPrefix = settings.shareGroup == nil ? nil : "\(settings.trellisPrefix)/status/"
    }

    /// What `topic` is to the relay itself; nil for a topic of the routes.
    public func kind(of topic: String) -> RelaySettings.OwnTopic? {
        // Lengths first: on the message callback, a route's topic is told apart without comparing its bytes.
        if topic.utf8.count == watchRequest.utf8.count, topic == watchRequest { return .watchRequest }
        guard let peerStatusPrefix, topic.hasPrefix(peerStatusPrefix) else { return nil }
        let id = topic.dropFirst(peerStatusPrefix.count)
        return id.isEmpty || id.contains("/") ? nil : .peerStatus(clientID: String(id))
    }
}
