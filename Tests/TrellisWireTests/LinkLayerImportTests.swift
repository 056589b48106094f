import Testing
import TrellisCore
import TrellisWire

/// Every link layer, IP version and file format the importer reads gives the same messages.
@Suite("Wire import: link layers and file formats")
struct LinkLayerImportTests {
    static let cases: [(FrameBuilder.Link, Bool)] = FrameBuilder.Link.allCases.flatMap { [($0, false), ($0, true)] }

    @Test("each link type, over IPv4 (with options) and IPv6 (with extension headers)", arguments: cases)
    func linkTypes(link: FrameBuilder.Link, ipv6: Bool) throws {
        var connection = clientConnection(ipv6: ipv6)
        for index in connection.segments.indices {
            connection.segments[index].segment.ipOptions = true
            connection.segments[index].segment.extensionHeaders = true
        }
        let file = PcapBuilder.pcap(connection.packets(link), linkType: link.linkType)
        let result = Imported(file, chunk: 7)
        #expect(result.problems.isEmpty)
        #expect(result.topics == ["sensors/0", "sensors/1", "sensors/2"])
        #expect(result.inputs.allSatisfy { $0.client == "plant-app" })
        #expect(
            result.messages.first?.connection
                == (ipv6 ? "[::1]:50000 → [::1]:1883" : "127.0.0.2:50000 → 127.0.0.1:1883"))
    }

    @Test(
        "classic pcap in both byte orders, with microsecond and nanosecond times",
        arguments: [(false, false), (true, false), (false, true), (true, true)])
    func pcapVariants(bigEndian: Bool, nanoseconds: Bool) {
        let connection = clientConnection()
        let file = PcapBuilder.pcap(connection.packets(), linkType: 1, bigEndian: bigEndian, nanoseconds: nanoseconds)
        let result = Imported(file)
        #expect(result.problems.isEmpty)
        #expect(result.texts == ["reading 0", "reading 1", "reading 2"])
        let publishTimes = connection.segments.filter { $0.segment.payload.first == 0x30 }.map(\.microseconds)
        #expect(result.inputs.map(\.microseconds) == publishTimes)
    }

    @Test("pcapng with two interfaces of different link types and time resolutions", arguments: [false, true])
    func pcapngTwoInterfaces(bigEndian: Bool) {
        let first = clientConnection(client: "on-eth")
        let second = clientConnection(client: "on-any") {
            $0.client = 50001; $0.time += 500
        }
        let packets = (first.packets(.ethernet, interface: 0) + second.packets(.sll2, interface: 1)).sorted {
            $0.microseconds < $1.microseconds
        }
        let file = PcapBuilder.pcapng(packets, interfaces: [(1, 6), (276, 9)], bigEndian: bigEndian)
        let result = Imported(file, chunk: 13)
        #expect(result.problems.isEmpty)
        #expect(result.inputs.filter { $0.client == "on-eth" }.count == 3)
        #expect(result.inputs.filter { $0.client == "on-any" }.count == 3)
        let times = second.segments.filter { $0.segment.payload.first == 0x30 }.map(\.microseconds)
        #expect(result.inputs.filter { $0.client == "on-any" }.map(\.microseconds) == times)
    }

    @Test("a link type it does not read is refused by name")
    func unsupportedLinkType() {
        let file = PcapBuilder.pcap(clientConnection().packets(.raw), linkType: 127)
        let result = Imported(file)
        #expect(result.messages.isEmpty)
        #expect(result.problems.count == 1)
        #expect(result.problems.first?.message.contains("link type 127 (IEEE802_11_RADIOTAP) is not supported") == true)
    }

    @Test("a file that is not a capture, and one cut short, are reported")
    func notACapture() {
        let text = Imported(Array("{\"t\":\"2026-11-22T10:41:05Z\"}\n".utf8))
        #expect(text.problems.map(\.message).first?.hasPrefix("not a pcap or pcapng capture") == true)
        let file = PcapBuilder.pcap(clientConnection().packets(), linkType: 1)
        let cut = Imported(Array(file.dropLast(5)))
        #expect(cut.topics == ["sensors/0", "sensors/1", "sensors/2"])
        #expect(cut.problems.map(\.message).first?.contains("the file ends inside a packet record") == true)
    }
}
