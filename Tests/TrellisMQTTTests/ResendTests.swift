import Foundation
import Testing
import TrellisMQTT
import TrellisTestSupport

/// What a broker makes of a message libmosquitto sends again after its connection was lost before
/// the broker's acknowledgement came back: the ground of Trellis's QoS 2 for what its readers must
/// see once (`PublishQoS`), shown on a real Mosquitto.
///
/// The broker is paused (SIGSTOP) so that the PUBLISH waits unread in its socket; the publisher's
/// connection is then cut; the resumed broker reads the PUBLISH from the dead connection, and the
/// publisher, connected again with its kept session, sends it once more.
@Suite("A message sent again after a lost connection")
struct ResendTests {
    @Test(
        "the broker delivers a QoS 1 copy as a new message and a QoS 2 copy not at all",
        arguments: [(QoS.atLeastOnce, 2), (QoS.exactlyOnce, 1)])
    func resent(qos: QoS, deliveries: Int) async throws {
        try await withTestBroker { broker in
            let reader = try await TestClients.connect(to: broker)
            try await reader.subscribe("resent/#", qos: .atLeastOnce)
            let inbox = await MessageCollector.collecting(reader)
            let writer = try await TestClients.connect(to: broker, id: "writer-\(UUID().uuidString.prefix(8))") {
                $0.cleanStart = false
                $0.sessionExpiry = 600
            }
            try await broker.pause()
            let before = broker.unreadBytes()
            try writer.publish(topic: "resent/answer", payload: Array("42".utf8), qos: qos)
            try await eventually("the PUBLISH waits in the paused broker's socket") {
                // The PUBLISH is 22 bytes; a keepalive's PINGREQ alone (2) does not count.
                broker.unreadBytes() >= before + 20
            }
            writer.dropConnectionUncleanly()
            broker.resume()
            // Published after the reconnect at QoS 2, so released to the reader after every copy of
            // the answer.
            try await writer.publishAndWait(topic: "resent/end", payload: [], qos: .exactlyOnce)
            _ = try await inbox.messages(on: "resent/end")
            #expect(await inbox.received(on: "resent/answer").count == deliveries)
            await writer.shutdown()
            await reader.shutdown()
        }
    }

    @Test("a QoS 2 message to a broker that takes at most QoS 1 is published at QoS 1")
    func brokerWithoutQoS2() async throws {
        try await SharedBroker.withQoSCappedListener { broker, capped, space in
            // The reader takes QoS 2 on the other listener: the QoS it gets is the one the writer sent.
            let reader = try await TestClients.connect(to: broker)
            try await reader.subscribe(space("capped/#"), qos: .exactlyOnce)
            let inbox = await MessageCollector.collecting(reader)
            let writer = try await TestClients.connect(to: broker) { $0.port = capped }
            try writer.publish(topic: space("capped/answer"), payload: Array("42".utf8), qos: .exactlyOnce)
            try await writer.publishAndWait(topic: space("capped/waited"), payload: [], qos: .exactlyOnce)
            let answer = try await inbox.messages(on: space("capped/answer"))
            #expect(answer[0].qos == .atLeastOnce)
            _ = try await inbox.messages(on: space("capped/waited"))
            await writer.shutdown()
            await reader.shutdown()
        }
    }
}
