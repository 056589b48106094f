import Foundation
import Testing
import TrellisMQTT
import TrellisTestSupport

@Suite("Flow control of received messages")
struct FlowControlTests {
    @Test("with a small unhandled window every message still arrives, in order", arguments: [1, 4])
    func windowKeepsOrder(window: Int) async throws {
        try await NumberedFlood.with(prefix: "flow", count: 500, window: window) { flood in
            let received = try await receive(500, from: flood.consumer) { _ in flood.consumer.messageHandled() }
            #expect(received.map { $0.text ?? "" } == (0..<500).map(String.init))
        }
    }

    @Test("a message's acknowledgement waits for messageHandled: a connection lost before that brings it again")
    func acknowledgementAfterHandling() async throws {
        try await SharedBroker.with { broker, space in
            let held = space("held")
            let (consumer, producer, inbox, first) = try await Self.holding(on: broker, prefix: held)
            // The PUBACK of held/1 is queued but not written: the connection dies with it.
            consumer.dropConnectionUncleanly()
            consumer.messageHandled()
            let both = try await inbox.messages(on: "\(held)/1", count: 2)
            #expect(both[1].payload == first.payload)
            #expect(both[1].delivery?.packetID == first.delivery?.packetID)
            #expect(both[1].delivery?.sessionResumed == true)
            consumer.messageHandled()
            await producer.shutdown()
            await consumer.shutdown()
        }
    }

    @Test(
        "a message still held when the connection is lost does not keep the next connection from connecting and reading"
    )
    func heldAcrossReconnect() async throws {
        try await SharedBroker.with { broker, space in
            let stuck = space("stuck")
            let (consumer, producer, inbox, first) = try await Self.holding(on: broker, prefix: stuck)

            // The consumer is still busy with the message (waiting for its store, say) when the
            // connection goes: the next one connects, resubscribes and reads all the same.
            consumer.dropConnectionUncleanly()
            let both = try await inbox.messages(on: "\(stuck)/1", count: 2, timeout: .seconds(30))
            #expect(both[1].delivery?.packetID == first.delivery?.packetID)
            #expect(both[1].delivery?.connection != first.delivery?.connection)
            try await producer.publishAndWait(topic: "\(stuck)/2", payload: Array("two".utf8), qos: .atLeastOnce)

            // The old connection's message is reported first and holds nothing back; once the
            // redelivery is handled too, its acknowledgement leaves and the next message is read.
            consumer.messageHandled()
            consumer.messageHandled()
            _ = try await inbox.messages(on: "\(stuck)/2", timeout: .seconds(30))
            #expect(consumer.isConnected, "the resubscriptions, written with the acknowledgement, were acknowledged")
            consumer.messageHandled()
            #expect(consumer.consumerProgress.held == 0 && consumer.consumerProgress.handled == 3)
            await producer.shutdown()
            await consumer.shutdown()
        }
    }

    /// A consumer with a persistent session that holds one unhandled message at most, subscribed to
    /// `prefix/#` at QoS 1, and a producer that published `prefix/1` ("one") to it; returns both, the
    /// consumer's inbox, and that first message as the consumer received it (not yet handled).
    static func holding(
        on broker: TestBroker, prefix: String
    ) async throws -> (consumer: MQTTClient, producer: MQTTClient, inbox: MessageCollector, first: MQTTMessage) {
        let consumer = try await TestClients.connect(to: broker, id: "holding-\(UUID().uuidString.prefix(8))") {
            $0.maxUnhandledMessages = 1
            $0.cleanStart = false
            $0.sessionExpiry = 600
        }
        let producer = try await TestClients.connect(to: broker)
        try await consumer.subscribe("\(prefix)/#", qos: .atLeastOnce)
        try await producer.publishAndWait(topic: "\(prefix)/1", payload: Array("one".utf8), qos: .atLeastOnce)
        let inbox = await MessageCollector.collecting(consumer)
        return (consumer, producer, inbox, try await inbox.messages(on: "\(prefix)/1")[0])
    }
}
