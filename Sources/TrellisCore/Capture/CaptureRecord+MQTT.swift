#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import TrellisMQTTTypes

extension CaptureRecord {
    /// The record of `message` seen at `time`.
    public init(_ message: MQTTMessage, at time: Date) {
        self.init(
            t: time, topic: message.topic, payload: message.payload, qos: message.qos.rawValue,
            retain: message.retain, properties: message.properties)
    }

    /// The message to publish for this record.
    public var message: MQTTMessage {
        MQTTMessage(
            topic: topic, payload: payload, qos: QoS(rawValue: qos) ?? .atMostOnce, retain: retain,
            properties: properties)
    }
}
