import TrellisMQTTTypes

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
