import Foundation
import Testing
import TrellisMQTT
import TrellisTestSupport

/// A consumer that prefers the client's network thread handles messages there, and work that
/// resumes from other threads (timers, other tasks) still wakes that thread.
@Suite("Handling messages on the network thread")
struct TaskExecutorTests {
    @Test(
        "a consumer on the network thread gets every message, in order, while awaiting other threads", arguments: [1, 8]
    )
    func consumerOnNetworkThread(window: Int) async throws {
        try await NumberedFlood.with(prefix: "exec", count: 200, window: window) { flood in
            let consumer = flood.consumer
            let received = try await withTaskExecutorPreference(consumer.taskExecutor) {
                var handled = 0
                return try await receive(200, from: consumer) { message in
                    // Resumed by the timer's thread: only a wake-up brings this task back.
                    if handled % 20 == 0 { try? await Task.sleep(for: .milliseconds(1)) }
                    // Published from the network thread itself, between two reads.
                    try? consumer.publish(topic: "\(flood.prefix)-echo/\(handled)", payload: message.payload)
                    handled += 1
                    consumer.messageHandled()
                }
            }
            #expect(received.map { $0.text ?? "" } == (0..<200).map(String.init))
        }
    }

    @Test("tasks preferring the executor still run after the client shut down")
    func jobsAfterShutdown() async throws {
        try await SharedBroker.with { broker, _ in
            let client = try await TestClients.connect(to: broker)
            await client.shutdown()
            let value = await Task(executorPreference: client.taskExecutor) { 42 }.value
            #expect(value == 42)
        }
    }
}
