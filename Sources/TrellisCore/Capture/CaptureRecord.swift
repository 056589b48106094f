#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import TrellisMQTTTypes

/// One MQTT message of a capture: when it crossed the broker, its topic, payload, QoS, retain
/// flag and v5 properties. A capture file holds one record per line (JSON Lines).
///
/// Its properties are the MQTT value type the client delivers and publishes (``MQTTProperties``),
/// so a record and a message convert into each other without a copy of each field
/// (``CaptureRecord/init(_:at:)``, ``CaptureRecord/message``).
public struct CaptureRecord: Sendable, Hashable {
    /// When the message was seen, rounded to the microsecond.
    public var t: Date {
        get { CaptureTime.date(microseconds: microseconds) }
        set { microseconds = CaptureTime.microseconds(newValue) }
    }
    /// `t` as microseconds since 1970: what the capture line holds.
    public var microseconds: Int64
    /// The topic it was published on.
    public var topic: String
    /// The payload bytes, UTF-8 or not.
    public var payload: [UInt8]
    /// 0, 1 or 2.
    public var qos: Int
    /// The retain flag as delivered.
    public var retain: Bool
    /// The v5 publish properties; empty when none were set.
    public var properties: MQTTProperties
    /// The MQTT client id of the publisher, when known: `trellis capture import` reads it from the
    /// connection's CONNECT; `trellis record` cannot see it and leaves it nil.
    public var client: String?

    public init(
        t: Date, topic: String, payload: [UInt8], qos: Int = 0, retain: Bool = false,
        properties: MQTTProperties = MQTTProperties()
    ) {
        self.microseconds = CaptureTime.microseconds(t)
        (self.topic, self.payload, self.qos, self.retain) = (topic, payload, qos, retain)
        self.properties = properties
    }

    /// A record at a time given in microseconds since 1970.
    public init(
        microseconds: Int64, topic: String, payload: [UInt8], qos: Int = 0, retain: Bool = false,
        properties: MQTTProperties = MQTTProperties(), client: String? = nil
    ) {
        (self.microseconds, self.topic, self.payload, self.qos) = (microseconds, topic, payload, qos)
        (self.retain, self.properties, self.client) = (retain, properties, client)
    }

    /// Convenience for text payloads.
    public init(
        t: Date, topic: String, text: String, qos: Int = 0, retain: Bool = false,
        properties: MQTTProperties = MQTTProperties()
    ) {
        self.init(t: t, topic: topic, payload: Array(text.utf8), qos: qos, retain: retain, properties: properties)
    }

    /// The payload as text, or nil when it is not valid UTF-8.
    public var text: String? { String(validating: payload, as: UTF8.self) }
}

/// What is wrong with one capture line, in words a user can act on.
public struct CaptureLineError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
