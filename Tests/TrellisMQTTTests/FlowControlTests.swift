import Testing
import TrellisMQTT
import TrellisTestSupport

@Suite("Flow control of received messages")
struct FlowControlTests {
    @Test("with a small unhandled window every message still arrives, in order", arguments: [1, 4])
    func windowKeepsOrder(window: Int) async throws {
        try await withTestBroker { broker in
            let consumer = try await TestClients.connect(to: broker) { $0.maxUnhandledMessages = window }
            let producer = try await TestClients.connect(to: broker)
            try await consumer.subscribe("flow/#", qos: .atLeastOnce)
            for index in 0..<500 {
                try producer.publish(topic: "flow/\(index)", payload: Array("\(index)".utf8), qos: .atLeastOnce)
            }
            var received: [String] = []
            for await message in consumer.messages {
                received.append(message.text ?? "")
                consumer.messageHandled()
                if received.count == 500 { break }
            }
            #expect(received == (0..<500).map(String.init))
            await producer.shutdown()
            await consumer.shutdown()
        }
    }
}
