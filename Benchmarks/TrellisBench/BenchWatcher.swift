import Foundation
import Synchronization
import TrellisMQTT

/// `trellis watch` as the benchmark runs it with `--watching`: a client that keeps Trellis's stream
/// of decoded traffic on (a request for 60 s every 20 s) and reads every event, so the table's
/// figures are those of a relay with a watcher attached. Events are counted, not printed.
final class BenchWatcher: Sendable {
    let client: MQTTClient
    let events = Atomic<Int>(0)
    private let tasks = Mutex<[Task<Void, Never>]>([])

    init(port: Int) async throws {
        client = try MQTTClient(
            configuration: MQTTConfiguration(host: "127.0.0.1", port: port, clientID: "bench-watcher"))
        client.start()
        try await client.waitUntilConnected()
        try await client.subscribe("trellis/watch/events", qos: .atMostOnce)
        let client = self.client
        let asking = Task {
            while !Task.isCancelled {
                try? client.publish(
                    topic: "trellis/watch/request", payload: Array(#"{"seconds":60}"#.utf8), qos: .atMostOnce)
                try? await Task.sleep(for: .seconds(20))
            }
        }
        let reading = Task { [self] in
            for await message in client.messages where message.topic == "trellis/watch/events" {
                events.add(1, ordering: .relaxed)
            }
        }
        tasks.withLock { $0 = [asking, reading] }
    }

    /// Stops reading and asking; returns how many events came.
    func stop() async -> Int {
        for task in tasks.withLock({ $0 }) { task.cancel() }
        await client.shutdown()
        return events.load(ordering: .relaxed)
    }
}
