import TrellisMQTTTypes

extension MQTTPacket {
    /// Reads `frame` as a packet of a connection at `version` (nil when the CONNECT was not seen:
    /// only a CONNECT can be read then).
    static func decode(_ frame: MQTTFramer.Frame, version: MQTTWireVersion?) throws(WireProblem) -> MQTTPacket {
        var reader = FieldReader(bytes: frame.body)
        switch frame.type {
        case 1:
            let name = try reader.string("the protocol name")
            guard name == "MQTT" || name == "MQIsdp" else {
                throw WireProblem("a CONNECT names the protocol \"\(name)\", not MQTT")
            }
            let level = try reader.byte("the protocol level")
            guard MQTTWireVersion(level: level) != nil else {
                throw WireProblem("a CONNECT asks for MQTT protocol level \(level); 3 (3.1), 4 (3.1.1) and 5 are read")
            }
            _ = try reader.byte("the connect flags")
            _ = try reader.bytes(2, "the keep alive")
            if level == 5 { _ = try reader.properties() }
            return .connect(level: level, clientID: try reader.string("the client id"))
        case 2 where version == .v5:
            _ = try reader.bytes(2, "the CONNACK flags and reason code")
            guard !reader.isAtEnd else { return .connack(assignedClientID: nil) }
            return .connack(assignedClientID: try reader.properties().assignedClientID)
        case 3:
            guard let version else { throw WireProblem("needs the protocol version") }
            var publish = Publish(
                topic: try reader.string("the topic"), payload: [], qos: Int((frame.flags >> 1) & 3),
                retain: frame.flags & 1 != 0, dup: frame.flags & 8 != 0)
            if publish.qos > 0 { publish.packetID = try reader.u16("the packet id") }
            if version == .v5 {
                let properties = try reader.properties()
                publish.properties = properties.message
                publish.topicAlias = properties.topicAlias
            }
            publish.payload = Array(reader.rest)
            return .publish(publish)
        case 4, 5, 6, 7:
            return .acknowledgement(type: frame.type, packetID: try reader.u16("the packet id"))
        default:
            return .other(type: frame.type)
        }
    }
}

/// Reads the fields of a packet's body in order; running past the end is a problem, not a trap.
struct FieldReader {
    var bytes: ArraySlice<UInt8>

    var isAtEnd: Bool { bytes.isEmpty }
    var rest: ArraySlice<UInt8> { bytes }

    mutating func bytes(_ count: Int, _ what: String) throws(WireProblem) -> ArraySlice<UInt8> {
        guard let taken = bytes.bytes(0, count) else { throw WireProblem("the packet ends inside \(what)") }
        bytes = bytes.dropFirst(count)
        return taken
    }

    mutating func byte(_ what: String) throws(WireProblem) -> UInt8 { try bytes(1, what).first! }

    mutating func u16(_ what: String) throws(WireProblem) -> UInt16 { try bytes(2, what).be16(0)! }

    mutating func u32(_ what: String) throws(WireProblem) -> UInt32 { try bytes(4, what).be32(0)! }

    mutating func binary(_ what: String) throws(WireProblem) -> ArraySlice<UInt8> {
        try bytes(Int(u16(what)), what)
    }

    mutating func string(_ what: String) throws(WireProblem) -> String {
        let raw = try binary(what)
        guard let text = String(validating: raw, as: UTF8.self) else { throw WireProblem("\(what) is not valid UTF-8") }
        return text
    }

    mutating func variableInteger(_ what: String) throws(WireProblem) -> Int {
        var value = 0
        for index in 0..<4 {
            let byte = try self.byte(what)
            value |= Int(byte & 0x7F) << (7 * index)
            if byte & 0x80 == 0 { return value }
        }
        throw WireProblem("\(what) runs over four bytes")
    }
}
