/// A message the broker publishes on the client's behalf when the connection dies uncleanly.
public struct MQTTWill: Sendable, Hashable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: QoS
    public var retain: Bool

    public init(topic: String, payload: [UInt8], qos: QoS = .atLeastOnce, retain: Bool = true) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}
