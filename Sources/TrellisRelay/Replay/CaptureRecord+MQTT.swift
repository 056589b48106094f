import Foundation
import TrellisCore
import TrellisMQTT

extension CaptureRecord {
    /// The record of `message` seen at `time`.
    public init(_ message: MQTTMessage, at time: Date) {
        let properties = CaptureProperties(
            responseTopic: message.properties.responseTopic,
            correlationData: message.properties.correlationData,
            userProperties: message.properties.userProperties.map { .init($0.name, $0.value) },
            contentType: message.properties.contentType)
        self.init(t: time, topic: message.topic, payload: message.payload, qos: message.qos.rawValue,
                  retain: message.retain, properties: properties)
    }

    /// The message to publish for this record.
    public var message: MQTTMessage {
        MQTTMessage(topic: topic, payload: payload, qos: QoS(rawValue: qos) ?? .atMostOnce, retain: retain,
                    properties: MQTTProperties(
                        responseTopic: properties.responseTopic,
                        correlationData: properties.correlationData,
                        userProperties: properties.userProperties.map { UserProperty($0.name, $0.value) },
                        contentType: properties.contentType))
    }
}
