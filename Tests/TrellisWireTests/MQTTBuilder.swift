/// MQTT control packets as the specification lays them out (3.1.1 and 5), for built captures.
enum MQTTBuilder {
    static func string(_ text: String) -> [UInt8] {
        PcapBuilder.u16(UInt16(text.utf8.count)) + Array(text.utf8)
    }

    static func length(_ value: Int) -> [UInt8] {
        var value = value, out: [UInt8] = []
        repeat {
            var byte = UInt8(value & 0x7F)
            value >>= 7
            if value > 0 { byte |= 0x80 }
            out.append(byte)
        } while value > 0
        return out
    }

    static func packet(_ first: UInt8, _ body: [UInt8]) -> [UInt8] {
        [first] + length(body.count) + body
    }

    static func connect(clientID: String, level: UInt8 = 4) -> [UInt8] {
        var body = string("MQTT") + [level, 0x02, 0, 60]
        if level == 5 { body += [0] }
        return packet(0x10, body + string(clientID))
    }

    /// A PUBLISH; `properties` is the v5 property bytes (without their length), nil for 3.1.1.
    static func publish(
        _ topic: String, _ payload: [UInt8], qos: UInt8 = 0, retain: Bool = false, dup: Bool = false,
        packetID: UInt16 = 1, properties: [UInt8]? = nil
    ) -> [UInt8] {
        var body = string(topic)
        if qos > 0 { body += PcapBuilder.u16(packetID) }
        if let properties { body += length(properties.count) + properties }
        let first: UInt8 = 0x30 | (dup ? 8 : 0) | qos << 1 | (retain ? 1 : 0)
        return packet(first, body + payload)
    }

    static func pubrel(_ packetID: UInt16) -> [UInt8] { packet(0x62, PcapBuilder.u16(packetID)) }
    static func puback(_ packetID: UInt16) -> [UInt8] { packet(0x40, PcapBuilder.u16(packetID)) }

    /// v5 properties: response topic, correlation data, user property, content type, topic alias.
    static func responseTopic(_ topic: String) -> [UInt8] { [0x08] + string(topic) }
    static func correlationData(_ bytes: [UInt8]) -> [UInt8] { [0x09] + PcapBuilder.u16(UInt16(bytes.count)) + bytes }
    static func userProperty(_ name: String, _ value: String) -> [UInt8] { [0x26] + string(name) + string(value) }
    static func contentType(_ type: String) -> [UInt8] { [0x03] + string(type) }
    static func topicAlias(_ alias: UInt16) -> [UInt8] { [0x23] + PcapBuilder.u16(alias) }
}

/// A TCP connection as a list of segments with their sequence numbers kept, for built captures.
struct ConnectionBuilder {
    var client: UInt16 = 50000
    var broker: UInt16 = 1883
    var ipv6 = false
    var clientSequence: UInt32 = 1000
    var brokerSequence: UInt32 = 5000
    var time: Int64 = 1_795_000_000_000_000
    var segments: [(microseconds: Int64, segment: FrameBuilder.Segment)] = []

    /// The three-way handshake.
    mutating func open() {
        add(
            FrameBuilder.Segment(
                ipv6: ipv6, client: client, broker: broker, toBroker: true, sequence: clientSequence,
                flags: FrameBuilder.syn))
        add(
            FrameBuilder.Segment(
                ipv6: ipv6, client: client, broker: broker, toBroker: false, sequence: brokerSequence,
                acknowledgement: clientSequence &+ 1, flags: FrameBuilder.syn | FrameBuilder.ack))
        clientSequence &+= 1
        brokerSequence &+= 1
    }

    /// Bytes sent in one segment; returns its index, so a test can drop or repeat it.
    @discardableResult
    mutating func send(_ bytes: [UInt8], toBroker: Bool = true) -> Int {
        let sequence = toBroker ? clientSequence : brokerSequence
        add(
            FrameBuilder.Segment(
                ipv6: ipv6, client: client, broker: broker, toBroker: toBroker, sequence: sequence,
                acknowledgement: toBroker ? brokerSequence : clientSequence, payload: bytes))
        if toBroker { clientSequence &+= UInt32(bytes.count) } else { brokerSequence &+= UInt32(bytes.count) }
        return segments.count - 1
    }

    /// Both sides' FIN.
    mutating func close() {
        add(
            FrameBuilder.Segment(
                ipv6: ipv6, client: client, broker: broker, toBroker: true, sequence: clientSequence,
                flags: FrameBuilder.fin | FrameBuilder.ack))
        add(
            FrameBuilder.Segment(
                ipv6: ipv6, client: client, broker: broker, toBroker: false, sequence: brokerSequence,
                flags: FrameBuilder.fin | FrameBuilder.ack))
    }

    mutating func add(_ segment: FrameBuilder.Segment) {
        time += 1000
        segments.append((time, segment))
    }

    /// The segments as packets of `link`.
    func packets(_ link: FrameBuilder.Link = .ethernet, interface: Int = 0) -> [PcapBuilder.Packet] {
        segments.map {
            PcapBuilder.Packet(
                microseconds: $0.microseconds, interface: interface, frame: FrameBuilder.frame($0.segment, link: link))
        }
    }
}
