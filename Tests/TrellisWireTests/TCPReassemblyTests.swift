import Testing
import TrellisCore
import TrellisWire

/// TCP put back in order: reordering, retransmission, overlaps, wraparound, gaps, snap length,
/// reused ports and captures that start mid-connection.
@Suite("Wire import: TCP reassembly")
struct TCPReassemblyTests {
    static let texts = ["reading 0", "reading 1", "reading 2"]

    @Test("segments out of order, retransmitted and overlapping give each message once, in order")
    func reorderedAndRetransmitted() {
        var connection = clientConnection()
        // Handshake 0-1, CONNECT 2, CONNACK 3, publishes 4-6.
        connection.segments.swapAt(4, 6)
        connection.segments.insert(connection.segments[5], at: 7) // a retransmission
        var overlap = connection.segments[4]
        overlap.segment.sequence &-= 5 // starts five bytes into the previous segment
        overlap.segment.payload = Array(connection.segments[5].segment.payload.suffix(5)) + overlap.segment.payload
        connection.segments.insert(overlap, at: 8)
        let result = Imported(PcapBuilder.pcap(connection.packets(), linkType: 1))
        #expect(result.problems.isEmpty)
        #expect(result.texts == Self.texts)
    }

    @Test("sequence numbers wrapping past 2^32", arguments: [UInt32.max - 3, UInt32.max - 40, UInt32.max])
    func wraparound(start: UInt32) {
        let connection = clientConnection { $0.clientSequence = start }
        let result = Imported(PcapBuilder.pcap(connection.packets(), linkType: 1))
        #expect(result.problems.isEmpty)
        #expect(result.texts == Self.texts)
    }

    @Test("a packet across segments, and several packets in one segment", arguments: [1, 3, 10])
    func framing(pieces: Int) {
        var connection = ConnectionBuilder()
        connection.open()
        let big = MQTTBuilder.publish("photos/1", [UInt8](repeating: 0xAB, count: 3000))
        var bytes =
            MQTTBuilder.connect(clientID: "cam") + big + MQTTBuilder.publish("a", Array("x".utf8))
            + MQTTBuilder.publish("b", Array("y".utf8))
        let size = (bytes.count + pieces - 1) / pieces
        while !bytes.isEmpty {
            connection.send(Array(bytes.prefix(size)))
            bytes.removeFirst(min(size, bytes.count))
        }
        let result = Imported(PcapBuilder.pcap(connection.packets(), linkType: 1))
        #expect(result.problems.isEmpty)
        #expect(result.topics == ["photos/1", "a", "b"])
        #expect(result.inputs.first?.payload.count == 3000)
    }

    @Test("a missing segment stops that direction with the connection and time; other connections are read")
    func gap() {
        var broken = clientConnection(client: "lossy")
        let lost = broken.segments.remove(at: 5)
        let whole = clientConnection(client: "fine") { $0.client = 50001 }
        let file = PcapBuilder.pcap(broken.packets() + whole.packets(), linkType: 1)
        let result = Imported(file)
        #expect(result.inputs.filter { $0.client == "lossy" }.map { $0.text ?? "" } == ["reading 0"])
        #expect(result.inputs.filter { $0.client == "fine" }.count == 3)
        let problem = try? #require(result.problems.first)
        #expect(result.problems.count == 1)
        #expect(problem?.connection == "127.0.0.2:50000 → 127.0.0.1:1883 (client → broker)")
        #expect(problem?.microseconds == broken.segments[5].microseconds)
        #expect(problem?.message.contains("bytes are missing") == true)
        _ = lost
    }

    @Test("a segment cut by the snap length stops that direction; the rest of the file is read")
    func snapLength() {
        let cut = clientConnection(client: "cut")
        var packets = cut.packets()
        let full = packets[5].frame.count
        packets[5].frame.removeLast(4)
        packets[5].originalLength = full
        let file = PcapBuilder.pcap(
            packets + clientConnection(client: "next") { $0.client = 50001 }.packets(), linkType: 1)
        let result = Imported(file)
        #expect(result.inputs.filter { $0.client == "cut" }.count == 1)
        #expect(result.inputs.filter { $0.client == "next" }.count == 3)
        #expect(result.problems.count == 1)
        #expect(result.problems.first?.message.contains("snap length") == true)
        #expect(result.problems.first?.microseconds == cut.segments[5].microseconds)
    }

    @Test("a new SYN on the same ports starts a new connection")
    func reusedPort() {
        let first = clientConnection(client: "first")
        let second = clientConnection(client: "second") {
            $0.clientSequence = 900_000; $0.time += 1_000_000
        }
        // The first connection never closes: the second SYN alone ends it.
        let result = Imported(PcapBuilder.pcap(Array(first.packets().dropLast(2)) + second.packets(), linkType: 1))
        #expect(result.problems.isEmpty)
        #expect(result.inputs.map { $0.client ?? "" } == ["first", "first", "first", "second", "second", "second"])
        #expect(result.statistics.connections == 2)
    }

    @Test("a capture that starts mid-connection is read from its first whole packet")
    func midStream() {
        var connection = ConnectionBuilder()
        connection.open()
        connection.send(MQTTBuilder.connect(clientID: "early"))
        let publish = MQTTBuilder.publish("sensors/0", Array("first".utf8))
        connection.send(Array(publish.prefix(5)))
        connection.send(Array(publish.dropFirst(5)))
        connection.send(
            MQTTBuilder.publish("sensors/1", Array("second".utf8))
                + MQTTBuilder.publish("sensors/2", Array("third".utf8)))
        let packets = Array(connection.packets().dropFirst(4)) // from the middle of the first PUBLISH
        let withVersion = Imported(PcapBuilder.pcap(packets, linkType: 1), version: .v311)
        #expect(withVersion.problems.isEmpty)
        #expect(withVersion.topics == ["sensors/1", "sensors/2"])
        #expect(withVersion.statistics.joinedMidStream == 1)
        let without = Imported(PcapBuilder.pcap(packets, linkType: 1))
        #expect(without.messages.isEmpty)
        #expect(without.problems.first?.message.contains("--mqtt-version") == true)
    }
}
