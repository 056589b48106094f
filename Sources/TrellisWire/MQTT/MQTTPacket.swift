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

/// The v5 properties of a packet the importer keeps: those a capture record holds, the topic
/// alias, and the client id a broker assigns.
struct WireProperties {
    var message = MQTTProperties()
    var topicAlias: UInt16?
    var assignedClientID: String?
}

extension FieldReader {
    /// Reads a v5 property list (its length, then identifier and value pairs). Every property of
    /// the MQTT 5 specification is read past, so an unknown identifier means the bytes are not MQTT 5.
    mutating func properties() throws(WireProblem) -> WireProperties {
        let length = try variableInteger("the property length")
        var reader = FieldReader(bytes: try bytes(length, "the properties"))
        var found = WireProperties()
        while !reader.isAtEnd {
            let identifier = try reader.variableInteger("a property identifier")
            switch identifier {
            case 0x03: found.message.contentType = try reader.string("the content type")
            case 0x08: found.message.responseTopic = try reader.string("the response topic")
            case 0x09: found.message.correlationData = Array(try reader.binary("the correlation data"))
            case 0x12: found.assignedClientID = try reader.string("the assigned client id")
            case 0x23: found.topicAlias = try reader.u16("the topic alias")
            case 0x26:
                let name = try reader.string("a user property's name")
                found.message.userProperties.append(UserProperty(name, try reader.string("a user property's value")))
            case 0x01, 0x17, 0x19, 0x24, 0x25, 0x28, 0x29, 0x2A: _ = try reader.byte("a property")
            case 0x13, 0x21, 0x22: _ = try reader.u16("a property")
            case 0x02, 0x11, 0x18, 0x27: _ = try reader.u32("a property")
            case 0x0B: _ = try reader.variableInteger("a subscription identifier")
            case 0x15, 0x1A, 0x1C, 0x1F: _ = try reader.string("a property")
            case 0x16: _ = try reader.binary("the authentication data")
            default: throw WireProblem("unknown MQTT 5 property identifier \(identifier)")
            }
        }
        return found
    }
}
