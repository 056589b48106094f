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
