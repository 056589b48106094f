import Testing
@testable import TrellisMQTT

/// The client's message stream on its own: order, ending, a cancelled consumer, and the single consumer rule.
@Suite("MQTTMessageStream")
struct MQTTMessageStreamTests {
    /// A consumer that waits for one message and returns its topic (nil when the stream ended).
    private func firstTopic(of stream: MQTTMessageStream) -> Task<String?, Never> {
        Task {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()?.topic
        }
    }

    private func message(_ index: Int) -> MQTTMessage {
        MQTTMessage(topic: "t/\(index)", payload: Array("\(index)".utf8))
    }

    @Test("messages queued before and while the consumer waits arrive in order; the end comes after the last")
    func order() async {
        let stream = MQTTMessageStream()
        for index in 0..<3 { stream.yield(message(index)) }
        let consumer = Task {
            var topics: [String] = []
            for await message in stream { topics.append(message.topic) }
            return topics
        }
        for index in 3..<1_000 { stream.yield(message(index)) }
        stream.finish()
        stream.yield(message(1_000))
        #expect(await consumer.value == (0..<1_000).map { "t/\($0)" })
    }

    @Test("a consumer waiting for a message gets nil when the stream finishes")
    func finishWakesTheConsumer() async {
        let stream = MQTTMessageStream()
        let consumer = firstTopic(of: stream)
        stream.finish()
        #expect(await consumer.value == nil)
    }

    /// A consumer reading every message, inside `withCancellationWatched` or not: its cancellation
    /// must end the stream the same way either way.
    private func consumer(
        of stream: MQTTMessageStream, watched: Bool, cancelFirst: Bool = false,
        whileReading: @escaping @Sendable () -> Void = {}
    ) -> Task<[String], Never> {
        Task {
            func read() async -> [String] {
                if cancelFirst { withUnsafeCurrentTask { $0?.cancel() } }
                var topics: [String] = []
                for await message in stream {
                    topics.append(message.topic)
                    whileReading()
                }
                return topics
            }
            return watched ? await stream.withCancellationWatched { await read() } : await read()
        }
    }

    @Test(
        "cancelling a waiting consumer ends the stream: it gets nil, and later messages are dropped",
        arguments: [false, true])
    func cancellation(watched: Bool) async {
        let stream = MQTTMessageStream()
        let consumer = consumer(of: stream, watched: watched)
        while stream.queue.state.withLock({ $0.waiter == nil }) { await Task.yield() }
        consumer.cancel()
        #expect(await consumer.value == [])
        stream.yield(message(1))
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == nil)
    }

    @Test(
        "a cancelled consumer still gets what was queued, then nil, even while messages keep coming",
        arguments: [false, true])
    func cancelledWithBacklog(watched: Bool) async {
        let stream = MQTTMessageStream()
        for index in 0..<3 { stream.yield(message(index)) }
        let extra = message(99)
        let consumer = consumer(of: stream, watched: watched, cancelFirst: true) { stream.yield(extra) }
        #expect(await consumer.value == ["t/0", "t/1", "t/2"])
    }

    @Test("a consumer cancelled while busy still gets what came before its next next()", arguments: [false, true])
    func cancelledWhileBusy(watched: Bool) async {
        let stream = MQTTMessageStream()
        stream.yield(message(1))
        let second = message(2)
        let consumer = consumer(of: stream, watched: watched) {
            // Cancelled while handling the first; the second arrives before the next `next()`.
            withUnsafeCurrentTask { $0?.cancel() }
            stream.yield(second)
        }
        #expect(await consumer.value == ["t/1", "t/2"])
        stream.yield(message(3))
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == nil)
    }

    @Test("after withCancellationWatched returns, next() watches cancellation again")
    func watchingEndsWithTheScope() async {
        let stream = MQTTMessageStream()
        stream.yield(message(0))
        let topic = await stream.withCancellationWatched {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()?.topic
        }
        #expect(topic == "t/0")
        #expect(stream.queue.state.withLock { $0.watched } == 0)
        let consumer = firstTopic(of: stream)
        while stream.queue.state.withLock({ $0.waiter == nil }) { await Task.yield() }
        consumer.cancel()
        #expect(await consumer.value == nil)
    }

    @Test(
        "a second task awaiting next() while one waits is a programming error, and traps, watched or not",
        arguments: [false, true])
    func secondConsumerTraps(watched: Bool) async {
        await #expect(processExitsWith: .failure) { [watched] in
            let stream = MQTTMessageStream()
            let first = Task {
                func read() async -> MQTTMessage? {
                    var iterator = stream.makeAsyncIterator()
                    return await iterator.next()
                }
                return watched ? await stream.withCancellationWatched { await read() } : await read()
            }
            while stream.queue.state.withLock({ $0.waiter == nil }) { await Task.yield() }
            var second = stream.makeAsyncIterator()
            _ = await second.next()
            _ = await first.value
        }
    }
}
