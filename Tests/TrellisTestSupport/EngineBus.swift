import Foundation
import Synchronization
import TrellisMQTTTypes
import TrellisRelay

/// The topics of a relay's engine in the test process, for clients written against MQTT (the
/// ported iPhone app): what a client publishes is handed to the engine in the order published, one
/// message at a time as the relay's loop takes them from its broker, and what the engine publishes
/// is delivered to every client subscribed to that topic, then kept for the test to read. No
/// broker: for the services' answers to a client's whole session, on each store. Wills,
/// retained delivery, access control and acknowledgements are the broker's, tested through
/// ``RelayHarness``.
public final class EngineBus: Sendable {
    /// Receives a message on a topic subscribed to.
    public typealias Receiver = @Sendable (MQTTMessage) async -> Void

    private struct Published: Sendable {
        var message: MQTTMessage
        var handled: CheckedContinuation<Void, Never>?
    }

    /// The subscriptions, and what the engine published.
    private final class Topics: Sendable {
        let subscribers = Mutex<[(id: UUID, topic: String, receiver: Receiver)]>([])
        let delivered = Mutex<[MQTTMessage]>([])
    }

    public let harness: EngineHarness
    private let queue: AsyncStream<Published>.Continuation
    private let loop: Task<Void, Never>
    private let topics: Topics

    public init(_ harness: EngineHarness) {
        self.harness = harness
        let (stream, queue) = AsyncStream.makeStream(of: Published.self)
        self.queue = queue
        let topics = Topics()
        self.topics = topics
        loop = Task {
            for await published in stream {
                for message in await harness.send(
                    published.message.payload, on: published.message.topic, qos: published.message.qos)
                {
                    topics.delivered.withLock { $0.append(message) }
                    for subscriber in topics.subscribers.withLock({ $0 }) where subscriber.topic == message.topic {
                        await subscriber.receiver(message)
                    }
                }
                published.handled?.resume()
            }
        }
    }

    /// Delivers every message the engine publishes on `topic` (no wildcards) to `receiver`, until
    /// ``unsubscribe(_:)`` with the id returned.
    public func subscribe(_ topic: String, _ receiver: @escaping Receiver) -> UUID {
        let id = UUID()
        topics.subscribers.withLock { $0.append((id, topic, receiver)) }
        return id
    }

    public func unsubscribe(_ id: UUID) {
        topics.subscribers.withLock { $0.removeAll { $0.id == id } }
    }

    /// Publishes without waiting: the message is handled after every message published before it.
    public func publish(topic: String, payload: [UInt8], qos: QoS = .atLeastOnce) {
        queue.yield(Published(message: MQTTMessage(topic: topic, payload: payload, qos: qos), handled: nil))
    }

    /// Publishes and returns once the engine has handled the message and its answers were delivered.
    public func publishAndWait(topic: String, payload: [UInt8], qos: QoS = .atLeastOnce) async {
        await withCheckedContinuation { continuation in
            queue.yield(
                Published(message: MQTTMessage(topic: topic, payload: payload, qos: qos), handled: continuation))
        }
    }

    /// Everything the engine published on `topic` so far, oldest first.
    public func received(on topic: String) -> [MQTTMessage] {
        topics.delivered.withLock { $0 }.filter { $0.topic == topic }
    }

    /// Ends the handling of what is published; call before the engine's store closes.
    public func finish() async {
        queue.finish()
        await loop.value
    }
}

/// Runs `body` with a bus on an engine over a fresh store of `kind`; the bus is finished before the
/// store closes.
public func withEngineBus<T>(
    _ kind: StoreKind, settings: RelaySettings = RelaySettings(), _ body: (EngineBus) async throws -> T
) async throws -> T {
    try await withEngine(kind, settings: settings) { harness in
        try await withTearDown(of: EngineBus(harness), { await $0.finish() }, body)
    }
}
