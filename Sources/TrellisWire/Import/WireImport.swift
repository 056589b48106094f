/// Turns a pcap or pcapng capture of MQTT traffic into the messages that crossed it, fed in chunks.
///
/// The path is capture file → link layer → IP → TCP, per connection and direction → MQTT framing →
/// PUBLISH packets. Only TCP connections to one of `ports` (the broker's) are read. Problems of one
/// connection are reported with its name and the time and stop that direction; the rest of the file
/// is still read. Nothing is held but the chunk in hand, each connection's early segments and
/// unfinished packets, and the connections still open.
public struct WireImport: Sendable {
    /// What was read, for the summary line.
    public struct Statistics: Sendable, Hashable {
        public var packets = 0
        public var connections = 0
        public var publishes = 0
        /// QoS 2 copies (same packet id before PUBREL) and QoS 1 DUP copies left out.
        public var duplicates = 0
        /// DUP PUBLISHes kept and marked as redeliveries.
        public var redelivered = 0
        /// Connections the capture joined after their start.
        public var joinedMidStream = 0

        public init() {}
    }

    /// What reading a chunk or the end of the file gave, in the order seen.
    public enum Event: Sendable, Hashable {
        case message(WireMessage)
        case problem(WireProblem)
    }

    let ports: Set<UInt16>
    let assumedVersion: MQTTWireVersion?
    var reader = CaptureFileReader()
    var connections: [ConnectionKey: WireConnection] = [:]
    var refusedLinks: Set<UInt32> = []
    var reportedFragments = false
    var events: [Event] = []
    public internal(set) var statistics = Statistics()

    /// `ports`: the broker's TCP ports. `assumedVersion`: the MQTT version of connections whose
    /// CONNECT was not captured (without it, those connections are reported and left out).
    public init(ports: Set<UInt16>, assumedVersion: MQTTWireVersion? = nil) {
        self.ports = ports
        self.assumedVersion = assumedVersion
    }

    /// Reads the next chunk of the file and returns what it completed.
    public mutating func push(_ chunk: some Collection<UInt8>) -> [Event] {
        reader.push(chunk)
        while true {
            do {
                guard let packet = try reader.next() else { break }
                statistics.packets += 1
                read(packet)
            } catch {
                events.append(.problem(error))
                break
            }
        }
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    /// At the end of the file: a cut-short file, and the bytes still missing in each connection.
    public mutating func finish() -> [Event] {
        if let problem = reader.finish() { events.append(.problem(problem)) }
        for key in connections.keys.sorted(by: { $0.name < $1.name }) { close(key) }
        defer { events.removeAll() }
        return events
    }

    mutating func read(_ packet: WirePacket) {
        let network: NetworkPacket
        do {
            network = try LinkLayer.network(packet.data, type: packet.linkType)
        } catch {
            if refusedLinks.insert(packet.linkType).inserted {
                events.append(
                    .problem(
                        WireProblem(
                            microseconds: packet.microseconds, "interface \(packet.interface): \(error.message)")))
            }
            return
        }
        let reading: IPReading
        switch network {
        case let .ipv4(bytes): reading = IPLayer.ipv4(bytes)
        case let .ipv6(bytes): reading = IPLayer.ipv6(bytes)
        case .other: return
        }
        switch reading {
        case let .tcp(segment): read(segment, at: packet.microseconds)
        case .ignored: return
        case .fragment:
            if !reportedFragments {
                reportedFragments = true
                events.append(
                    .problem(
                        WireProblem(
                            microseconds: packet.microseconds,
                            "IP fragments are not reassembled; segments that were fragmented are missing from their connection"
                        )))
            }
        }
    }

    mutating func read(_ segment: TCPSegment, at microseconds: Int64) {
        let direction: WireDirection
        let key: ConnectionKey
        if ports.contains(segment.destinationPort) {
            direction = .toBroker
            key = ConnectionKey(
                clientAddress: Array(segment.sourceAddress), clientPort: segment.sourcePort,
                brokerAddress: Array(segment.destinationAddress), brokerPort: segment.destinationPort)
        } else if ports.contains(segment.sourcePort) {
            direction = .toClient
            key = ConnectionKey(
                clientAddress: Array(segment.destinationAddress), clientPort: segment.destinationPort,
                brokerAddress: Array(segment.sourceAddress), brokerPort: segment.sourcePort)
        } else {
            return
        }
        // A client's SYN with a new initial sequence number on ports in use starts a new connection.
        if direction == .toBroker, segment.syn, !segment.ack, let existing = connections[key],
            existing.toBroker.tcp.initialSequence != segment.sequence
        {
            close(key)
        }
        if connections[key] == nil {
            guard segment.syn || !segment.payload.isEmpty else { return }
            connections[key] = WireConnection(key: key)
            statistics.connections += 1
        }
        var connection = connections.removeValue(forKey: key)!
        receive(segment, direction: direction, at: microseconds, in: &connection)
        if connection.closed && !connection.toBroker.tcp.hasGap && !connection.toClient.tcp.hasGap {
            if connection.toBroker.tcp.startedMidStream || connection.toClient.tcp.startedMidStream {
                statistics.joinedMidStream += 1
            }
        } else {
            connections[key] = connection
        }
    }

    /// Reports what a connection still misses and forgets it.
    mutating func close(_ key: ConnectionKey) {
        guard let connection = connections.removeValue(forKey: key) else { return }
        if connection.toBroker.tcp.startedMidStream || connection.toClient.tcp.startedMidStream {
            statistics.joinedMidStream += 1
        }
        for direction in [WireDirection.toBroker, .toClient] {
            let stream = connection[direction]
            guard !stream.stopped, stream.tcp.hasGap else { continue }
            events.append(
                .problem(
                    WireProblem(
                        connection: connection.name + " (\(direction.rawValue))", microseconds: stream.tcp.earliestHeld,
                        "bytes are missing from the capture before this segment (a packet was not captured); the rest of this direction is left out"
                    )))
        }
    }
}
