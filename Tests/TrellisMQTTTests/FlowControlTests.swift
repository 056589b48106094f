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
}
