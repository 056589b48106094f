/// An error from the MQTT client, carrying libmosquitto's own description.
public struct MQTTError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, in broad strokes, so callers can react.
    public enum Kind: Sendable, Hashable {
        /// The client is not connected and the operation could not be queued.
        case notConnected
        /// The broker refused the connection (bad credentials, protocol, identifier).
        case connectionRefused
        /// The broker refused a subscription.
        case subscriptionRefused
        /// An argument was invalid: an empty topic, wildcards where none are allowed, a payload too large.
        case invalidArgument
        /// The operation did not complete in time.
        case timedOut
        /// The client was shut down while the operation was pending.
        case shutDown
        /// The broker refused a message it was sent: a PUBACK reason code of 0x80 or more (not
        /// authorized, over a quota, a payload format it refuses), in ``MQTTError/code``.
        case rejected
        /// Any other libmosquitto failure.
        case library
    }

    /// The broad category.
    public var kind: Kind
    /// libmosquitto's numeric code (`MOSQ_ERR_*` or a reason code), when there is one.
    public var code: Int32?
    /// A sentence saying what went wrong: `mosquitto_strerror`'s text where the library produced it.
    public var message: String

    public init(kind: Kind, code: Int32? = nil, message: String) {
        self.kind = kind
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// Whether the message it is about will not go however often it is sent: the client refused
    /// it (too large for the broker, a topic it refuses) or the broker did. A sender drops such a
    /// message rather than retrying it and holding up those behind it.
    public var refusesTheMessage: Bool { kind == .invalidArgument || kind == .rejected }
}
