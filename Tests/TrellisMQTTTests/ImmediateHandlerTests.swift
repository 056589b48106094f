import Foundation
import Synchronization
import Testing
@testable import TrellisMQTT
import TrellisTestSupport

/// A consumer's immediate handler (``MQTTClient/setImmediateHandler(_:)``) takes QoS 0 messages on
/// the network thread only while the consumer waits with nothing queued, so it never runs beside the
/// consumer's handling of a message and never passes one still queued; what it declines, and every
/// QoS 1 message, reaches the stream. Through a real Mosquitto.
@Suite("Messages handled on the network thread while the consumer waits")
struct ImmediateHandlerTests {
    @Test("taken only while the consumer waits; each message once, in order, between the handler and the stream")
    func takenWhileWaiting() async throws {
        try await withTestBroker { broker in
            let consumer = try await TestClients.connect(to: broker) { $0.maxUnhandledMessages = 16 }
            let producer = try await TestClients.connect(to: broker)
            try await consumer.subscribe("im/#", qos: .atLeastOnce)
            let seen = Seen()
            consumer.setImmediateHandler { message in
                if seen.busy.load(ordering: .sequentiallyConsistent) { seen.takenWhileBusy.add(1, ordering: .sequentiallyConsistent) }
                guard message.topic.hasPrefix("im/take/") else { return false }
                #expect(message.qos == .atMostOnce && message.delivery == nil)
                seen.taken.withLock { $0.append(message.topic) }
                seen.handled.withLock { $0.append(message.topic) }
                return true
            }
            // Sent in this order: every third on a topic the handler declines, every fifth at QoS 1
            // (never offered to it), the last a marker at QoS 1 that ends the consumer's loop. The
            // broker keeps the order within each QoS; a QoS 0 message may pass QoS 1 ones waiting
            // for room in flight.
            let sent = (0..<120).map { index in
                (topic: index % 3 == 1 ? "im/keep/\(index)" : "im/take/\(index)", qos: index % 5 == 4 ? QoS.atLeastOnce : .atMostOnce)
            } + [(topic: "im/keep/end", qos: QoS.atLeastOnce)]
            let streamed = try await withTaskExecutorPreference(consumer.taskExecutor) {
                try await withThrowingTaskGroup(of: [String].self) { group in
                    group.addTask {
                        var streamed: [String] = []
                        for await message in consumer.messages {
                            seen.busy.store(true, ordering: .sequentiallyConsistent)
                            streamed.append(message.topic)
                            seen.handled.withLock { $0.append(message.topic) }
                            await Task.yield()   // the network thread reads meanwhile
                            consumer.messageHandled()
                            seen.busy.store(false, ordering: .sequentiallyConsistent)
                            if message.topic == "im/keep/end" { break }
                        }
                        return streamed
                    }
                    // The first message comes to a consumer known to wait: the handler takes it.
                    let deadline = ContinuousClock.now + .seconds(20)
                    while consumer.messages.idleConsumerHandler() == nil, ContinuousClock.now < deadline { await Task.yield() }
                    for message in sent {
                        try producer.publish(topic: message.topic, payload: [], qos: message.qos)
                    }
                    let streamed = try await group.next() ?? []
                    group.cancelAll()
                    return streamed
                }
            }
            consumer.setImmediateHandler(nil)
            let takenTopics = seen.taken.withLock { $0 }
            let order = Dictionary(uniqueKeysWithValues: sent.enumerated().map { ($1.topic, $0) })
            #expect(seen.takenWhileBusy.load(ordering: .sequentiallyConsistent) == 0)
            #expect(takenTopics.first == "im/take/0")
            #expect(Set(takenTopics).isDisjoint(with: streamed))
            #expect((takenTopics + streamed).sorted() == sent.map(\.topic).sorted())
            // Handled in the order sent: no QoS 0 message taken by the handler passed one still queued
            // for, or held by, the consumer (QoS 1 ones may be passed by the broker itself).
            let handledQoS0 = seen.handled.withLock { $0 }.map { order[$0]! }.filter { sent[$0].qos == .atMostOnce }
            #expect(handledQoS0 == handledQoS0.sorted())
            // In the order sent: what the handler took, and what reached the stream at each QoS.
            let takenPositions = takenTopics.map { order[$0]! }
            #expect(takenPositions == takenPositions.sorted())
            for qos in [QoS.atMostOnce, .atLeastOnce] {
                let streamedPositions = streamed.map { order[$0]! }.filter { sent[$0].qos == qos }
                #expect(streamedPositions == streamedPositions.sorted())
            }
            for topic in takenTopics { #expect(sent[order[topic]!].qos == .atMostOnce && topic.hasPrefix("im/take/")) }
            for (topic, qos) in sent where qos == .atLeastOnce || topic.hasPrefix("im/keep/") { #expect(streamed.contains(topic)) }
            await producer.shutdown()
            await consumer.shutdown()
        }
    }
}

/// What the consumer and the handler saw, shared between the network thread and the test.
private final class Seen: Sendable {
    /// True while the consumer handles a message it took from the stream.
    let busy = Atomic<Bool>(false)
    /// Messages the handler was offered while the consumer was busy: must stay 0.
    let takenWhileBusy = Atomic<Int>(0)
    /// The topics the handler took, in order.
    let taken = Mutex<[String]>([])
    /// Every topic as it was handled, by the handler or by the consumer as it took it (both on the
    /// network thread, so in the order of their handling).
    let handled = Mutex<[String]>([])
}
