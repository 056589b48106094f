import TrellisMQTTTypes

/// The MQTT control packets the importer reads; the rest are framed and passed over.
enum MQTTPacket {
    /// CONNECT: the protocol level (3 for 3.1, 4 for 3.1.1, 5) and the client id.
    case connect(level: UInt8, clientID: String)
    /// CONNACK: in v5, the client id the broker assigned when the client sent none.
    case connack(assignedClientID: String?)
    case publish(Publish)
    /// PUBACK, PUBREC, PUBREL or PUBCOMP with its packet id.
    case acknowledgement(type: UInt8, packetID: UInt16)
    case other(type: UInt8)

    /// One PUBLISH as it crossed the wire.
    struct Publish {
        /// Empty when a v5 topic alias stands in for it.
        var topic: String
        var payload: [UInt8]
        var qos: Int
        var retain: Bool
        var dup: Bool
        var packetID: UInt16?
        var properties = MQTTProperties()
        var topicAlias: UInt16?
    }
}

/// The protocol level of a connection: 3.1 and 3.1.1 read the same; 5 adds properties.
public enum MQTTWireVersion: String, Sendable, CaseIterable {
    case v31 = "3.1"
    case v311 = "3.1.1"
    case v5 = "5"

    init?(level: UInt8) {
        switch level {
        case 3: self = .v31
        case 4: self = .v311
        case 5: self = .v5
        default: return nil
        }
    }
}
