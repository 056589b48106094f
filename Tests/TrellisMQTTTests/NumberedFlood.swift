import TrellisMQTT
import TrellisTestSupport

/// A consumer with a small window of unhandled messages, and a producer that has flooded it: the
/// set-up of the tests that a window keeps every message and their order (`FlowControlTests`,
/// `TaskExecutorTests`). The producer publishes `prefix/0`, `prefix/1`, … at QoS 1 without waiting
/// for acknowledgements, each message's payload its number as text; the consumer is subscribed to
/// `prefix/#` at QoS 1 and reads them itself (with `receive`).
struct NumberedFlood {
    let consumer: MQTTClient
    let producer: MQTTClient
    /// The first levels of the flood's topics (`prefix/0`, …), in the test's topic space.
    let prefix: String

    /// Connects both clients to `broker`, subscribes the consumer and publishes `count` messages.
    static func start(on broker: TestBroker, prefix: String, count: Int, window: Int) async throws -> NumberedFlood {
        let consumer = try await TestClients.connect(to: broker) { $0.maxUnhandledMessages = window }
        let producer = try await TestClients.connect(to: broker)
        try await consumer.subscribe("\(prefix)/#", qos: .atLeastOnce)
        for index in 0..<count {
            try producer.publish(topic: "\(prefix)/\(index)", payload: Array("\(index)".utf8), qos: .atLeastOnce)
        }
        return NumberedFlood(consumer: consumer, producer: producer, prefix: prefix)
    }

    /// Runs `body` with a flood on the shared broker (under `prefix` in a topic space of its own), then
    /// disconnects both clients, whatever the outcome.
    static func with<T>(prefix: String, count: Int, window: Int, _ body: (NumberedFlood) async throws -> T) async throws
        -> T
    {
        try await SharedBroker.with { broker, space in
            let flood = try await start(on: broker, prefix: space(prefix), count: count, window: window)
            return try await withTearDown(of: flood, { await $0.shutdown() }, body)
        }
    }

    /// Disconnects both clients.
    func shutdown() async {
        await producer.shutdown()
        await consumer.shutdown()
    }
}
