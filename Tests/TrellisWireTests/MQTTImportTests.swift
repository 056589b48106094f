import Testing
import TrellisCore
import TrellisMQTTTypes
import TrellisWire

/// The MQTT layer: versions, v5 properties and topic aliases, QoS 2 copies, DUP redeliveries,
/// deliveries to subscribers, and ports that do not carry plain MQTT.
@Suite("Wire import: MQTT")
struct MQTTImportTests {
    @Test("v5 properties are kept and topic aliases resolved per direction")
    func properties() throws {
        var connection = ConnectionBuilder()
        connection.open()
        connection.send(MQTTBuilder.connect(clientID: "asker", level: 5))
        let properties =
            MQTTBuilder.responseTopic("app/replies") + MQTTBuilder.correlationData([1, 2, 0xFF])
            + MQTTBuilder.userProperty("source", "pi") + MQTTBuilder.userProperty("source", "again")
            + MQTTBuilder.contentType("text/plain")
            + MQTTBuilder.topicAlias(3)
        connection.send(MQTTBuilder.publish("rpi/torpi", Array("status".utf8), qos: 1, properties: properties))
        connection.send(MQTTBuilder.publish("", Array("again".utf8), properties: MQTTBuilder.topicAlias(3)))
        // The broker's alias 3 is its own: it names another topic.
        connection.send(
            MQTTBuilder.publish("rpi/fromrpi", Array("ok".utf8), properties: MQTTBuilder.topicAlias(3)), toBroker: false
        )
        connection.send(
            MQTTBuilder.publish("", Array("ok 2".utf8), properties: MQTTBuilder.topicAlias(3)), toBroker: false)
        let result = Imported(PcapBuilder.pcap(connection.packets(), linkType: 1))
        #expect(result.problems.isEmpty)
        #expect(result.topics == ["rpi/torpi", "rpi/torpi"])
        #expect(result.deliveries.map(\.topic) == ["rpi/fromrpi", "rpi/fromrpi"])
        let first = try #require(result.inputs.first)
        #expect(
            first.properties
                == MQTTProperties(
                    responseTopic: "app/replies", correlationData: [1, 2, 0xFF],
                    userProperties: [.init("source", "pi"), .init("source", "again")], contentType: "text/plain"))
        #expect(first.qos == 1)
        #expect(first.jsonLine.contains(#""client":"asker""#))
        #expect(result.deliveries.allSatisfy { $0.client == nil })
    }

    @Test("a QoS 2 PUBLISH repeated before PUBREL is read once; after PUBREL its id is new again")
    func qos2Copies() {
        var connection = ConnectionBuilder()
        connection.open()
        connection.send(MQTTBuilder.connect(clientID: "exactly"))
        connection.send(MQTTBuilder.publish("p2o/buttons/b1/press", [], qos: 2, packetID: 7))
        connection.send(MQTTBuilder.publish("p2o/buttons/b1/press", [], qos: 2, dup: true, packetID: 7))
        connection.send(MQTTBuilder.pubrel(7))
        connection.send(MQTTBuilder.publish("p2o/buttons/b1/press", Array("2".utf8), qos: 2, packetID: 7))
        let result = Imported(PcapBuilder.pcap(connection.packets(), linkType: 1))
        #expect(result.problems.isEmpty)
        #expect(result.inputs.count == 2)
        #expect(result.statistics.duplicates == 1)
    }

    @Test("a QoS 1 DUP copy before the PUBACK is left out; a DUP after it is kept and marked")
    func qos1Redelivery() {
        var connection = ConnectionBuilder()
        connection.open()
        connection.send(MQTTBuilder.connect(clientID: "once"))
        connection.send(MQTTBuilder.publish("a", Array("1".utf8), qos: 1, packetID: 4))
        connection.send(MQTTBuilder.publish("a", Array("1".utf8), qos: 1, dup: true, packetID: 4))
        connection.send(MQTTBuilder.puback(4), toBroker: false)
        connection.send(MQTTBuilder.publish("a", Array("1".utf8), qos: 1, dup: true, packetID: 4))
        let result = Imported(PcapBuilder.pcap(connection.packets(), linkType: 1))
        #expect(result.inputs.count == 2)
        #expect(result.messages.map(\.redelivered) == [false, true])
        #expect(result.statistics.duplicates == 1)
    }

    @Test("MQTT 3.1 (MQIsdp) and 3.1.1 and 5 are read", arguments: [UInt8(3), 4, 5])
    func versions(level: UInt8) {
        var connection = ConnectionBuilder()
        connection.open()
        var connect = MQTTBuilder.connect(clientID: "v\(level)", level: level)
        if level == 3 {
            connect = MQTTBuilder.packet(0x10, MQTTBuilder.string("MQIsdp") + [3, 2, 0, 60] + MQTTBuilder.string("v3"))
        }
        connection.send(connect)
        connection.send(MQTTBuilder.publish("t", Array("x".utf8), properties: level == 5 ? [] : nil))
        let result = Imported(PcapBuilder.pcap(connection.packets(), linkType: 1))
        #expect(result.problems.isEmpty)
        #expect(result.topics == ["t"])
    }

    @Test(
        "TLS and WebSocket on a port are named and refused",
        arguments: [
            ([0x16, 0x03, 0x01, 0x00, 0x05, 1, 0, 0, 1, 3], "TLS (a ClientHello)"),
            (Array("GET /mqtt HTTP/1.1\r\nHost: pi\r\n\r\n".utf8), "MQTT over WebSocket")
        ])
    func refused(first: [UInt8], named: String) {
        var connection = ConnectionBuilder()
        connection.open()
        connection.send(first)
        let result = Imported(PcapBuilder.pcap(connection.packets(), linkType: 1))
        #expect(result.messages.isEmpty)
        #expect(result.problems.count == 1)
        #expect(result.problems.first?.message.contains(named) == true)
    }

    @Test(
        "a PUBLISH topic with a wildcard or a NUL is reported, not imported (found by the fuzzer)",
        arguments: ["a/+/b", "a/#", "a\u{0}b"])
    func invalidTopic(topic: String) {
        var connection = ConnectionBuilder()
        connection.open()
        connection.send(MQTTBuilder.connect(clientID: "bad"))
        connection.send(MQTTBuilder.publish(topic, Array("x".utf8)))
        let result = Imported(PcapBuilder.pcap(connection.packets(), linkType: 1))
        #expect(result.messages.isEmpty)
        #expect(result.problems.first?.message.contains("wildcard (+ or #) or a NUL") == true)
    }

    @Test("a publish delivered to several subscribers is one expected output")
    func deliveryCopies() {
        var messages: [WireMessage] = []
        for client in [UInt16(50001), 50002] {
            var connection = ConnectionBuilder(client: client)
            connection.open()
            connection.send(MQTTBuilder.connect(clientID: "sub\(client)"))
            connection.send(MQTTBuilder.publish("rpi/fromrpi", Array("answer".utf8)), toBroker: false)
            messages += Imported(PcapBuilder.pcap(connection.packets(), linkType: 1)).messages
        }
        var copies = DeliveryCopies()
        #expect(messages.map { copies.isFirst($0) } == [true, false])
        #expect(messages.map(\.clientID) == ["sub50001", "sub50002"])
    }
}
