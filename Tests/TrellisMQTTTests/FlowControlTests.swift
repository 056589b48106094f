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
        try await withTestBroker { broker in
            let consumer = try await TestClients.connect(to: broker, id: "held-\(UUID().uuidString.prefix(8))") {
                $0.maxUnhandledMessages = 1
                $0.cleanStart = false
                $0.sessionExpiry = 600
            }
            let producer = try await TestClients.connect(to: broker)
            try await consumer.subscribe("held/#", qos: .atLeastOnce)
            try await producer.publishAndWait(topic: "held/1", payload: Array("one".utf8), qos: .atLeastOnce)

            let inbox = await MessageCollector.collecting(consumer)
            let first = try await inbox.messages(on: "held/1")[0]
            // The PUBACK of held/1 is queued but not written: the connection dies with it.
            consumer.dropConnectionUncleanly()
            consumer.messageHandled()
            let both = try await inbox.messages(on: "held/1", count: 2)
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
        try await withTestBroker { broker in
            let consumer = try await TestClients.connect(to: broker, id: "stuck-\(UUID().uuidString.prefix(8))") {
                $0.maxUnhandledMessages = 1
                $0.cleanStart = false
                $0.sessionExpiry = 600
            }
            let producer = try await TestClients.connect(to: broker)
            try await consumer.subscribe("stuck/#", qos: .atLeastOnce)
            try await producer.publishAndWait(topic: "stuck/1", payload: Array("one".utf8), qos: .atLeastOnce)
            let inbox = await MessageCollector.collecting(consumer)
            let first = try await inbox.messages(on: "stuck/1")[0]

            // The consumer is still busy with the message (waiting for its store, say) when the
            // connection goes: the next one connects, resubscribes and reads all the same.
            consumer.dropConnectionUncleanly()
            let both = try await inbox.messages(on: "stuck/1", count: 2, timeout: .seconds(30))
            #expect(both[1].delivery?.packetID == first.delivery?.packetID)
            #expect(both[1].delivery?.connection != first.delivery?.connection)
            try await producer.publishAndWait(topic: "stuck/2", payload: Array("two".utf8), qos: .atLeastOnce)

            // The old connection's message is reported first and holds nothing back; once the
            // redelivery is handled too, its acknowledgement leaves and the next message is read.
            consumer.messageHandled()
            consumer.messageHandled()
            _ = try await inbox.messages(on: "stuck/2", timeout: .seconds(30))
            #expect(consumer.isConnected, "the resubscriptions, written with the acknowledgement, were acknowledged")
            consumer.messageHandled()
            #expect(consumer.consumerProgress.held == 0 && consumer.consumerProgress.handled == 3)
            await producer.shutdown()
            await consumer.shutdown()
        }
    }
}
