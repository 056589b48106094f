import Foundation
import Testing
import TrellisCore
import TrellisTestSupport
import TrellisWire

/// The importer against Wireshark's MQTT dissector (Debian's tshark) on the same files: a live
/// capture, and built files of each link layer, which also checks the test-side builder.
@Suite("Wire import: compared with tshark")
struct TsharkComparisonTests {
    static let skip = "needs tshark (make test installs it) and, for the live capture, tcpdump and the right to capture"

    @Test(
        "a tcpdump capture of mosquitto_pub traffic: the same topics, payloads and QoS",
        .enabled(if: CaptureAbility.canCapture && CaptureAbility.tshark != nil, Comment(rawValue: skip)))
    func liveCapture() async throws {
        let directory = try LiveCaptureTests.directory()
        let (file, port) = try await LiveCaptureTests.loopbackCapture(in: directory)
        try await Self.compare(file: file, port: port)
        try? FileManager.default.removeItem(atPath: directory)
    }

    @Test(
        "built captures of each link layer read the same in tshark",
        .enabled(if: CaptureAbility.tshark != nil, Comment(rawValue: skip)),
        arguments: FrameBuilder.Link.allCases)
    func builtCaptures(link: FrameBuilder.Link) async throws {
        let directory = try LiveCaptureTests.directory()
        let file = directory + "/built.pcap"
        var connection = ConnectionBuilder(ipv6: link == .sll2 || link == .null)
        connection.open()
        connection.send(MQTTBuilder.connect(clientID: "built", level: 5))
        connection.send([0x20, 3, 0, 0, 0], toBroker: false)
        connection.send(
            MQTTBuilder.publish("sensors/1", Array("one".utf8), properties: MQTTBuilder.contentType("text/plain"))
                + MQTTBuilder.publish("sensors/2", Array("two".utf8), qos: 1, packetID: 2, properties: []))
        connection.send(
            MQTTBuilder.publish(
                "answers/1", [0, 0xFE, 0x41], qos: 1, packetID: 9,
                properties: MQTTBuilder.userProperty("k", "v")), toBroker: false)
        connection.close()
        try Data(PcapBuilder.pcap(connection.packets(link), linkType: link.linkType)).write(
            to: URL(fileURLWithPath: file))
        try await Self.compare(file: file, port: 1883)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// tshark's PUBLISHes (topic, payload as hex, QoS; both directions, in frame order) against the import's.
    static func compare(file: String, port: UInt16) async throws {
        let output = try await ToolProcess.run([
            CaptureAbility.tshark!, "-r", file, "-d", "tcp.port==\(port),mqtt", "-Y", "mqtt.msgtype==3",
            "-T", "fields", "-e", "mqtt.topic", "-e", "mqtt.msg", "-e", "mqtt.qos",
            "-E", "separator=/t", "-E", "aggregator=/s"
        ])
        var fromTshark: [String] = []
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map {
                $0.split(separator: " ", omittingEmptySubsequences: false)
            }
            guard fields.count == 3 else { continue }
            for index in fields[0].indices {
                let payload = index < fields[1].count ? String(fields[1][index]) : ""
                fromTshark.append("\(fields[0][index]) \(payload) \(fields[2][index])")
            }
        }
        let imported = Imported(Array(try Data(contentsOf: URL(fileURLWithPath: file))), ports: [port])
        #expect(imported.problems.isEmpty, "\(imported.problems)")
        let ours = imported.messages.map { "\($0.record.topic) \(hex($0.record.payload)) \($0.record.qos)" }
        #expect(!ours.isEmpty)
        #expect(ours == fromTshark)
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
