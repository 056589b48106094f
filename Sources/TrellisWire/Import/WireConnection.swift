/// A TCP connection between a client and a broker port, whichever direction a segment went.
struct ConnectionKey: Hashable {
    var clientAddress: [UInt8]
    var clientPort: UInt16
    var brokerAddress: [UInt8]
    var brokerPort: UInt16

    /// `127.0.0.1:50312 → 127.0.0.1:1883` or `[::1]:50312 → [::1]:1883`: how problems name it.
    var name: String {
        Self.endpoint(clientAddress, clientPort) + " → " + Self.endpoint(brokerAddress, brokerPort)
    }

    static func endpoint(_ address: [UInt8], _ port: UInt16) -> String {
        address.count == 4 ? address.map(String.init).joined(separator: ".") + ":\(port)" : "[\(ipv6(address))]:\(port)"
    }

    /// An IPv6 address in its short form (RFC 5952): the longest run of zero groups as `::`.
    static func ipv6(_ address: [UInt8]) -> String {
        guard address.count == 16 else { return address.map { String($0) }.joined(separator: ".") }
        let groups = (0..<8).map { UInt16(address[2 * $0]) << 8 | UInt16(address[2 * $0 + 1]) }
        var best = (start: -1, length: 0)
        var index = 0
        while index < 8 {
            guard groups[index] == 0 else { index += 1; continue }
            var end = index
            while end < 8 && groups[end] == 0 { end += 1 }
            if end - index > best.length && end - index >= 2 { best = (index, end - index) }
            index = end
        }
        let text = groups.map { String($0, radix: 16) }
        guard best.start >= 0 else { return text.joined(separator: ":") }
        let head = text[..<best.start].joined(separator: ":")
        let tail = text[(best.start + best.length)...].joined(separator: ":")
        return head + "::" + tail
    }
}

/// One direction of an MQTT connection: its TCP reassembly, its MQTT framing and the v5 and QoS
/// state that belongs to one sender (topic aliases, QoS 2 packet ids until PUBREL, QoS 1 packet
/// ids until PUBACK).
struct WireStream {
    var tcp = TCPDirection()
    /// Created with the first bytes, synced unless the capture joined mid-connection.
    var framer: MQTTFramer?
    /// Set after a problem that leaves the rest of this direction unreadable.
    var stopped = false
    var aliases: [UInt16: String] = [:]
    /// QoS 2 packet ids received and not yet released by PUBREL: a PUBLISH with one of them is a copy.
    var unreleased: Set<UInt16> = []
    /// QoS 1 packet ids sent and not yet acknowledged: a DUP PUBLISH with one of them is a copy.
    var unacknowledged: Set<UInt16> = []
}

/// Both directions of one TCP connection to a broker port and what its CONNECT said.
struct WireConnection {
    let key: ConnectionKey
    let name: String
    var toBroker = WireStream()
    var toClient = WireStream()
    var version: MQTTWireVersion?
    var clientID: String?
    /// Set once the missing CONNECT has been reported, so it is said once per connection.
    var reportedVersionUnknown = false

    init(key: ConnectionKey) {
        self.key = key
        self.name = key.name
    }

    subscript(direction: WireDirection) -> WireStream {
        get { direction == .toBroker ? toBroker : toClient }
        set {
            if direction == .toBroker { toBroker = newValue } else { toClient = newValue }
        }
    }

    /// Both directions said FIN, or one is stopped and the other finished.
    var closed: Bool {
        (toBroker.tcp.finished || toBroker.stopped) && (toClient.tcp.finished || toClient.stopped)
    }
}
