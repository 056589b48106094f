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

    @Test("cancelling the consumer ends the stream: it gets nil, and later messages are dropped")
    func cancellation() async {
        let stream = MQTTMessageStream()
        let consumer = firstTopic(of: stream)
        consumer.cancel()
        #expect(await consumer.value == nil)
        stream.yield(message(1))
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == nil)
    }

    @Test("a cancelled consumer still gets what was queued, then nil, even while messages keep coming")
    func cancelledWithBacklog() async {
        let stream = MQTTMessageStream()
        for index in 0..<3 { stream.yield(message(index)) }
        let consumer = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var topics: [String] = []
            var iterator = stream.makeAsyncIterator()
            while let message = await iterator.next() {
                topics.append(message.topic)
                stream.yield(self.message(99))
            }
            return topics
        }
        #expect(await consumer.value == ["t/0", "t/1", "t/2"])
    }

    /// A consumer inside `withCancellationWatched`: its cancellation is watched by the scope, once,
    /// and ends the stream as it does for a consumer whose `next()` watches it.
    private func watchedConsumer(of stream: MQTTMessageStream, cancelFirst: Bool = false,
                                 whileReading: @escaping @Sendable () -> Void = {}) -> Task<[String], Never> {
        Task {
            await stream.withCancellationWatched {
                if cancelFirst { withUnsafeCurrentTask { $0?.cancel() } }
                var topics: [String] = []
                for await message in stream {
                    topics.append(message.topic)
                    whileReading()
                }
                return topics
            }
        }
    }

    @Test("inside withCancellationWatched, cancelling a waiting consumer ends the stream; later messages are dropped")
    func watchedCancellation() async {
        let stream = MQTTMessageStream()
        let consumer = watchedConsumer(of: stream)
        while stream.queue.state.withLock({ $0.waiter == nil }) { await Task.yield() }
        consumer.cancel()
        #expect(await consumer.value == [])
        stream.yield(message(1))
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == nil)
    }

    @Test("inside withCancellationWatched, a cancelled consumer still gets what was queued, then nil, while messages keep coming")
    func watchedCancellationWithBacklog() async {
        let stream = MQTTMessageStream()
        for index in 0..<3 { stream.yield(message(index)) }
        let extra = message(99)
        let consumer = watchedConsumer(of: stream, cancelFirst: true) { stream.yield(extra) }
        #expect(await consumer.value == ["t/0", "t/1", "t/2"])
    }

    @Test("inside withCancellationWatched, a consumer cancelled while busy still gets what came before its next next()")
    func watchedCancellationWhileBusy() async {
        let stream = MQTTMessageStream()
        stream.yield(message(1))
        let consumer = Task {
            await stream.withCancellationWatched {
                var iterator = stream.makeAsyncIterator()
                var topics: [String] = []
                if let first = await iterator.next() { topics.append(first.topic) }
                // Cancelled while handling the first; the second arrives before the next `next()`.
                withUnsafeCurrentTask { $0?.cancel() }
                stream.yield(message(2))
                while let message = await iterator.next() { topics.append(message.topic) }
                return topics
            }
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

    @Test("inside withCancellationWatched too, a second task awaiting next() while one waits traps")
    func secondWatchedConsumerTraps() async {
        await #expect(processExitsWith: .failure) {
            let stream = MQTTMessageStream()
            let first = Task {
                await stream.withCancellationWatched {
                    var iterator = stream.makeAsyncIterator()
                    return await iterator.next()
                }
            }
            while stream.queue.state.withLock({ $0.waiter == nil }) { await Task.yield() }
            var second = stream.makeAsyncIterator()
            _ = await second.next()
            _ = await first.value
        }
    }

    @Test("a second task awaiting next() while one waits is a programming error, and traps")
    func secondConsumerTraps() async {
        await #expect(processExitsWith: .failure) {
            let stream = MQTTMessageStream()
            let first = Task {
                var iterator = stream.makeAsyncIterator()
                return await iterator.next()
            }
            while stream.queue.state.withLock({ $0.waiter == nil }) { await Task.yield() }
            var second = stream.makeAsyncIterator()
            _ = await second.next()
            _ = await first.value
        }
    }
}
