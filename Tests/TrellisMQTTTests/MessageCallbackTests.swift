import Foundation
import Synchronization
import Testing
@testable import TrellisMQTT
import TrellisTestSupport

/// A consumer's message callback (``MQTTClient/setMessageCallback(_:)``) sees QoS 0 and QoS 1
/// messages on the network thread only while the consumer waits with nothing queued, so it never
/// runs beside the consumer's handling of a message and never passes one still queued; what it
/// passes on reaches the stream with the value it passed it on with, and a QoS 1 message it
/// consumes is acknowledged. Through a real Mosquitto.
@Suite("Messages handled on the network thread while the consumer waits")
struct MessageCallbackTests {
    @Test("taken only while the consumer waits; each message once, in order, between the callback and the stream")
    func takenWhileWaiting() async throws {
        try await SharedBroker.with { broker, space in
            let im = space("im")
            let (consumer, producer) = try await Self.clients(of: broker, consuming: "\(im)/#")
            let seen = Seen()
            consumer.setMessageCallback { message in
                if seen.busy.load(ordering: .sequentiallyConsistent) {
                    seen.takenWhileBusy.add(1, ordering: .sequentiallyConsistent)
                }
                guard message.topic.hasPrefix("\(im)/take/") else {
                    return .passedOn(carrying: Note("seen " + message.topic))
                }
                #expect((message.qos == .atMostOnce) == (message.delivery == nil))
                seen.taken.withLock { $0.append(message.topic) }
                seen.handled.withLock { $0.append(message.topic) }
                return .consumed
            }
            // Sent in this order: every third on a topic the callback passes on, every fourth at QoS 1,
            // the last a marker at QoS 1 that ends the consumer's loop. The broker keeps the order
            // within each QoS; a QoS 0 message may pass QoS 1 ones waiting for room in flight. The
            // acknowledgement of a QoS 1 message the callback consumes is checked by the next test.
            let sent =
                (0..<120).map { index in
                    (
                        topic: index % 3 == 1 ? "\(im)/keep/\(index)" : "\(im)/take/\(index)",
                        qos: index % 4 == 3 ? QoS.atLeastOnce : .atMostOnce
                    )
                } + [(topic: "\(im)/keep/end", qos: QoS.atLeastOnce)]
            let streamed = try await withTaskExecutorPreference(consumer.taskExecutor) {
                try await withThrowingTaskGroup(of: [String].self) { group in
                    group.addTask {
                        var streamed: [String] = []
                        for await received in consumer.messages.carrying {
                            let message = received.message
                            seen.busy.store(true, ordering: .sequentiallyConsistent)
                            // A message the callback saw carries what it passed it on with; one that
                            // came while the consumer was busy, nothing.
                            if let carried = received.carried {
                                #expect((carried as? Note)?.text == "seen " + message.topic)
                            }
                            streamed.append(message.topic)
                            seen.handled.withLock { $0.append(message.topic) }
                            await Task.yield() // the network thread reads meanwhile
                            consumer.messageHandled()
                            seen.busy.store(false, ordering: .sequentiallyConsistent)
                            if message.topic == "\(im)/keep/end" { break }
                        }
                        return streamed
                    }
                    // The first message comes to a consumer known to wait: the callback consumes it.
                    let deadline = ContinuousClock.now + .seconds(20)
                    while consumer.messages.idleConsumerCallback() == nil, ContinuousClock.now < deadline {
                        await Task.yield()
                    }
                    for message in sent {
                        try producer.publish(topic: message.topic, payload: [], qos: message.qos)
                    }
                    let streamed = try await group.next() ?? []
                    group.cancelAll()
                    return streamed
                }
            }
            consumer.setMessageCallback(nil)
            let takenTopics = seen.taken.withLock { $0 }
            let order = Dictionary(uniqueKeysWithValues: sent.enumerated().map { ($1.topic, $0) })
            #expect(seen.takenWhileBusy.load(ordering: .sequentiallyConsistent) == 0)
            #expect(takenTopics.first == "\(im)/take/0")
            #expect(Set(takenTopics).isDisjoint(with: streamed))
            #expect((takenTopics + streamed).sorted() == sent.map(\.topic).sorted())
            // Handled in the order sent, at each QoS: no message consumed by the callback passed one of its
            // QoS still queued for, or held by, the consumer (the broker itself may let a QoS 0
            // message pass QoS 1 ones). So are what the callback consumed and what reached the stream.
            let handled = seen.handled.withLock { $0 }.map { order[$0]! }
            for qos in [QoS.atMostOnce, .atLeastOnce] {
                for positions in [handled, takenTopics.map { order[$0]! }, streamed.map { order[$0]! }] {
                    let ofQoS = positions.filter { sent[$0].qos == qos }
                    #expect(ofQoS == ofQoS.sorted())
                }
            }
            for topic in takenTopics { #expect(topic.hasPrefix("\(im)/take/")) }
            for (topic, _) in sent where topic.hasPrefix("\(im)/keep/") { #expect(streamed.contains(topic)) }
            await producer.shutdown()
            await consumer.shutdown()
        }
    }
}

extension MessageCallbackTests {
    /// A consumer reading `filter` at QoS 1 with a read-ahead window of 16 (its receive maximum),
    /// and a producer, both connected to `broker`.
    static func clients(
        of broker: TestBroker,
        consuming filter: String
    ) async throws -> (consumer: MQTTClient, producer: MQTTClient) {
        let consumer = try await TestClients.connect(to: broker) { $0.maxUnhandledMessages = 16 }
        let producer = try await TestClients.connect(to: broker)
        try await consumer.subscribe(filter, qos: .atLeastOnce)
        return (consumer, producer)
    }

    @Test("a QoS 1 message the callback consumes is acknowledged: 40 come through a receive maximum of 16")
    func takenAtLeastOnceAcknowledged() async throws {
        try await SharedBroker.with { broker, space in
            let ack = space("ack")
            let (consumer, producer) = try await Self.clients(of: broker, consuming: "\(ack)/#")
            let taken = Mutex<[MQTTDelivery?]>([])
            consumer.setMessageCallback { message in
                taken.withLock { $0.append(message.delivery) }
                return .consumed
            }
            // The broker sends at most 16 QoS 1 messages unacknowledged (the receive maximum the
            // window announces). The consumer waits throughout, so the callback consumes every one: had
            // it not acknowledged them, the 17th would never come.
            let streamed = try await withTaskExecutorPreference(consumer.taskExecutor) {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    group.addTask {
                        var streamed = 0
                        for await _ in consumer.messages {
                            streamed += 1
                            consumer.messageHandled()
                        }
                        return streamed
                    }
                    let deadline = ContinuousClock.now + .seconds(20)
                    while consumer.messages.idleConsumerCallback() == nil, ContinuousClock.now < deadline {
                        await Task.yield()
                    }
                    for index in 0..<40 {
                        try producer.publish(topic: "\(ack)/\(index)", payload: [], qos: .atLeastOnce)
                    }
                    while taken.withLock({ $0.count }) < 40, ContinuousClock.now < deadline { await Task.yield() }
                    consumer.setMessageCallback(nil)
                    await consumer.shutdown()
                    return try await group.next() ?? 0
                }
            }
            let deliveries = taken.withLock { $0 }
            #expect(deliveries.count == 40 && streamed == 0)
            #expect(deliveries.allSatisfy { $0 != nil })
            await producer.shutdown()
        }
    }
}

extension MessageCallbackTests {
    @Test(
        "the answer of each message consumed goes out before the next is read; a message passed on carries its value"
    )
    func answersOfConsumedMessages() async throws {
        try await SharedBroker.with { broker, space in
            let wr = space("wr")
            let (consumer, producer) = try await Self.clients(of: broker, consuming: "\(wr)/request/#")
            let replies = await MessageCollector.collecting(producer)
            try await producer.subscribe("\(wr)/reply/#", qos: .atMostOnce)
            let answered = Atomic<Int>(0)
            consumer.setMessageCallback(
                { message in
                    guard message.topic.hasPrefix("\(wr)/request/take/") else {
                        return .passedOn(carrying: Note("begun " + message.topic))
                    }
                    let name = message.topic.dropFirst("\(wr)/request/take/".count)
                    try? consumer.publish(topic: "\(wr)/reply/\(name)", payload: Array("answer".utf8), qos: .atMostOnce)
                    answered.add(1, ordering: .sequentiallyConsistent)
                    return .consumed
                })
            try await withTaskExecutorPreference(consumer.taskExecutor) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await received in consumer.messages.carrying {
                            let message = received.message
                            // Answered by the consumer, not consumed by the callback. Sent alone while the
                            // consumer waits, the callback saw it first.
                            if message.topic == "\(wr)/request/keep" {
                                #expect((received.carried as? Note)?.text == "begun \(wr)/request/keep")
                                try consumer.publish(topic: "\(wr)/reply/kept", payload: [], qos: .atMostOnce)
                            }
                            consumer.messageHandled()
                            if message.topic == "\(wr)/request/end" { break }
                        }
                    }
                    let deadline = ContinuousClock.now + .seconds(20)
                    while consumer.messages.idleConsumerCallback() == nil, ContinuousClock.now < deadline {
                        await Task.yield()
                    }
                    // One at a time: each request is sent once the last answer has arrived, so each
                    // is read, answered and written on its own. One passed on between them is the
                    // consumer's to answer.
                    for index in 0..<10 {
                        try producer.publish(topic: "\(wr)/request/take/\(index)", payload: [], qos: .atMostOnce)
                        try await replies.messages(on: "\(wr)/reply/\(index)")
                        if index == 4 {
                            try producer.publish(topic: "\(wr)/request/keep", payload: [], qos: .atLeastOnce)
                            try await replies.messages(on: "\(wr)/reply/kept")
                        }
                    }
                    try producer.publish(topic: "\(wr)/request/end", payload: [], qos: .atLeastOnce)
                    try await group.next()
                }
            }
            consumer.setMessageCallback(nil)
            // Each of the ten was consumed by the callback, and each answer arrived (awaited above).
            #expect(answered.load(ordering: .sequentiallyConsistent) == 10)
            await producer.shutdown()
            await consumer.shutdown()
        }
    }
}

/// What the consumer and the callback saw, shared between the network thread and the test.
private final class Seen: Sendable {
    /// True while the consumer handles a message it took from the stream.
    let busy = Atomic<Bool>(false)
    /// Messages the callback was offered while the consumer was busy: must stay 0.
    let takenWhileBusy = Atomic<Int>(0)
    /// The topics the callback consumed, in order.
    let taken = Mutex<[String]>([])
    /// Every topic as it was handled, by the callback or by the consumer as it took it (both on the
    /// network thread, so in the order of their handling).
    let handled = Mutex<[String]>([])
}

/// What a test's message callback passes a message on with.
private final class Note: Sendable {
    let text: String

    init(_ text: String) {
        self.text = text
    }
}
