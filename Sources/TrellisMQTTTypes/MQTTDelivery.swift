/// How the broker delivered a QoS 1 or 2 message: enough to recognise the same message when the
/// broker sends it again.
///
/// MQTT resends a message whose acknowledgement it never received with the same packet
/// identifier, on the next connection of a resumed session. A receiver that remembers the
/// identifiers of what it already handled can therefore drop such a redelivery. The identifiers
/// only mean something inside one session: when `sessionResumed` is false the broker started
/// afresh and numbers from the start again, so whatever was remembered no longer applies.
public struct MQTTDelivery: Sendable, Hashable {
    /// The packet identifier the broker gave the message, 1...65535.
    public var packetID: Int
    /// Counts this client's successful connections, starting at 1; it changes on every reconnect.
    public var connection: Int
    /// True when the broker kept this client's session at that connection (the CONNACK's
    /// session-present flag), so identifiers continue those of the previous connection.
    public var sessionResumed: Bool

    public init(packetID: Int, connection: Int, sessionResumed: Bool) {
        (self.packetID, self.connection, self.sessionResumed) = (packetID, connection, sessionResumed)
    }
}
