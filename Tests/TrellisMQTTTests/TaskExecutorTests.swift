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

    @Test("a publish from another thread leaves at once, without waiting for the loop's next pass")
    func publishFromAnotherThreadIsWritten() async throws {
        try await withTestBroker { broker in
            let idle = try await TestClients.connect(to: broker)
            let listener = try await TestClients.connect(to: broker)
            let inbox = await MessageCollector.collecting(listener)
            try await listener.subscribe("wake/#")
            let clock = ContinuousClock()
            let started = clock.now
            // The idle client's thread is asleep in poll with nothing to write; only the wake-up
            // pipe gets this QoS 0 message out before the loop's one-second timeout.
            try idle.publish(topic: "wake/now", payload: Array("x".utf8))
            _ = try await inbox.messages(on: "wake/now")
            #expect(clock.now - started < .milliseconds(900))
            await idle.shutdown()
            await listener.shutdown()
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
