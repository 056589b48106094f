import Foundation
import Testing
import TrellisMQTT
import TrellisTestSupport

/// The largest packet a client takes (``MQTTConfiguration/maximumPacketSize``), announced on connect
/// as MQTT v5's Maximum Packet Size, against a real Mosquitto (the shared one) that has no
/// `max_packet_size` of its own (it takes packets up to MQTT's 256 MiB): the broker must keep a larger
/// message from that client alone, and go on delivering what follows on the same connection. libmosquitto does not
/// check what it reads, so this is the only bound a flood of huge messages meets.
@Suite("A client's maximum packet size, kept by a real broker")
struct MaximumPacketSizeTests {
    @Test("a message over the announced size never reaches the client; the next one does, on the same connection")
    func largerMessageKeptFromTheClient() async throws {
        try await SharedBroker.with { broker, space in
            let id = "bounded-\(UUID().uuidString.prefix(8))"
            let bounded = try await TestClients.connect(to: broker, id: id) { $0.maximumPacketSize = 16 * 1024 }
            let boundedInbox = try await MessageCollector.collecting(bounded, subscribedTo: [space("big/#")])
            let (unbounded, unboundedInbox) = try await TestClients.connectCollecting(to: broker, space("big/#"))
            let publisher = try await TestClients.connect(to: broker)
            let huge = [UInt8](repeating: 0x61, count: 64 * 1024)
            let fits = [UInt8](repeating: 0x62, count: 8 * 1024)
            try await publisher.publishAndWait(topic: space("big/huge"), payload: huge, qos: .atLeastOnce)
            try await publisher.publishAndWait(topic: space("big/fits"), payload: fits, qos: .atLeastOnce)

            // A client that announced nothing gets both: the broker took the huge one.
            #expect(try await unboundedInbox.messages(on: space("big/huge")).first?.payload == huge)
            #expect(try await unboundedInbox.messages(on: space("big/fits")).first?.payload == fits)
            // The bounded client gets the message published after the huge one, on its first connection
            // (not after a disconnect the huge one caused), and by then the huge one was passed over.
            let after = try await boundedInbox.messages(on: space("big/fits"))
            #expect(after.first?.payload == fits)
            #expect(after.first?.delivery?.connection == 1)
            #expect(await boundedInbox.received(on: space("big/huge")).isEmpty)
            #expect(broker.log().contains("Dropping too large outgoing PUBLISH for \(id)"))
            #expect(bounded.isConnected)

            await publisher.shutdown()
            await unbounded.shutdown()
            await bounded.shutdown()
        }
    }
}
