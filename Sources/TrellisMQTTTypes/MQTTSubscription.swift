/// A subscription the client keeps and re-sends after every reconnect.
public struct MQTTSubscription: Sendable, Hashable {
    /// Topic filter, wildcards allowed.
    public var filter: String
    /// Highest QoS the broker may deliver with.
    public var qos: QoS
    /// Do not receive what this client itself publishes on matching topics.
    public var noLocal: Bool

    public init(_ filter: String, qos: QoS = .atLeastOnce, noLocal: Bool = false) {
        self.filter = filter
        self.qos = qos
        self.noLocal = noLocal
    }
}
