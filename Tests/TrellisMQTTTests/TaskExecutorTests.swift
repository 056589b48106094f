import Foundation
import Testing
import TrellisMQTT
import TrellisTestSupport

/// A consumer that prefers the client's network thread handles messages there, and work that
/// resumes from other threads (timers, other tasks) still wakes that thread.
@Suite("Handling messages on the network thread")
struct TaskExecutorTests {
    @Test("a consumer on the network thread gets every message, in order, while awaiting other threads", arguments: [1, 8])
    func consumerOnNetworkThread(window: Int) async throws {
        try await withTestBroker { broker in
            let consumer = try await TestClients.connect(to: broker) { $0.maxUnhandledMessages = window }
            let producer = try await TestClients.connect(to: broker)
            try await consumer.subscribe("exec/#", qos: .atLeastOnce)
            for index in 0..<200 {
                try producer.publish(topic: "exec/\(index)", payload: Array("\(index)".utf8), qos: .atLeastOnce)
            }
            let received = await withTaskExecutorPreference(consumer.taskExecutor) {
                var received: [String] = []
                for await message in consumer.messages {
                    // Resumed by the timer's thread: only a wake-up brings this task back.
                    if received.count % 20 == 0 { try? await Task.sleep(for: .milliseconds(1)) }
                    // Published from the network thread itself, between two reads.
                    try? consumer.publish(topic: "echo/\(received.count)", payload: message.payload)
                    received.append(message.text ?? "")
                    consumer.messageHandled()
                    if received.count == 200 { break }
                }
                return received
            }
            #expect(received == (0..<200).map(String.init))
            await producer.shutdown()
            await consumer.shutdown()
        }
    }

    @Test("tasks preferring the executor still run after the client shut down")
    func jobsAfterShutdown() async throws {
        try await withTestBroker { broker in
            let client = try await TestClients.connect(to: broker)
            await client.shutdown()
            let value = await Task(executorPreference: client.taskExecutor) { 42 }.value
            #expect(value == 42)
        }
    }
}
