import DequeModule
import Synchronization

/// The messages a client receives, in arrival order: ``MQTTClient/messages``.
///
/// Like an unbounded `AsyncStream` with a single consumer, but made for this one element type:
/// `AsyncStream`'s buffer is generic code outside this module, which looks up type metadata for
/// every message it queues. Once the client finishes the stream, the messages already queued are
/// still handed out, then `next()` returns nil. A consumer task that is cancelled ends the stream
/// too, as `AsyncStream` does: it still gets what was queued, then nil. Two tasks awaiting `next()`
/// at once is a programming error and traps.
public struct MQTTMessageStream: AsyncSequence, Sendable {
    public typealias Element = MQTTMessage
    public typealias Failure = Never

    let queue = Queue()

    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Failure = Never
        @usableFromInline let queue: Queue

        init(queue: Queue) {
            self.queue = queue
        }

        public mutating func next() async -> MQTTMessage? {
            let entry = await queue.next()
            return entry?.message
        }

        /// The next message, waited for on the caller's executor: `for await` calls this, so a
        /// consumer that prefers the network thread stays on it between messages. Inlined into the
        /// consumer, which then calls the queue itself: one async frame and executor check fewer
        /// per message.
        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)?) async -> MQTTMessage? {
            let entry = await queue.next()
            return entry?.message
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(queue: queue)
    }

    /// The same messages, each with the value the consumer's message callback passed it on with
    /// (``MQTTMessageDisposition/passedOn(carrying:)``): what the callback began of a message
    /// reaches the consumer with the message itself.
    public var carrying: Carrying { Carrying(queue: queue) }

    /// The stream's messages with what the message callback passed each on with.
    public struct Carrying: AsyncSequence, Sendable {
        public typealias Element = MQTTCarriedMessage
        public typealias Failure = Never
        let queue: Queue

        public struct AsyncIterator: AsyncIteratorProtocol {
            public typealias Failure = Never
            @usableFromInline let queue: Queue

            public mutating func next() async -> MQTTCarriedMessage? {
                await queue.next()
            }

            /// Inlined into the consumer, as ``MQTTMessageStream/AsyncIterator/next(isolation:)`` is.
            @inlinable
            public mutating func next(isolation actor: isolated (any Actor)?) async -> MQTTCarriedMessage? {
                await queue.next()
            }
        }

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(queue: queue)
        }
    }

    /// True when a message is queued for the consumer now, so `next()` would not wait: the burst
    /// the network thread read is not finished yet.
    public var hasQueued: Bool {
        queue.state.withLock { !$0.pending.isEmpty }
    }

    /// The consumer's message callback (``MQTTClient/setMessageCallback(_:)``) when the consumer
    /// waits in `next()` with nothing queued, so that a message consumed now comes in its turn; nil
    /// otherwise. Only the network thread yields, so the consumer stays waiting until it does.
    func idleConsumerCallback() -> MessageCallback? {
        queue.state.withLock { $0.waiter == nil ? nil : $0.callback }
    }

    /// Sets the callback ``idleConsumerCallback()`` hands out.
    func setMessageCallback(_ callback: (@Sendable (MQTTMessage) -> MQTTMessageDisposition)?) {
        let boxed = callback.map { MessageCallback($0) }
        queue.state.withLock { $0.callback = boxed }
    }

    /// The consumer's message callback, in a class: a closure returned through the lock's generic
    /// result is converted to the generic form and back, a context allocated and freed per message;
    /// a class reference passes through as it is.
    final class MessageCallback: Sendable {
        let take: @Sendable (MQTTMessage) -> MQTTMessageDisposition

        init(_ take: @escaping @Sendable (MQTTMessage) -> MQTTMessageDisposition) {
            self.take = take
        }
    }

    /// Queues `message`, with the value the message callback passed it on with, for the consumer, or
    /// hands it straight to a consumer waiting for one. Dropped once the stream has finished.
    func yield(_ message: MQTTMessage, carrying carried: (any AnyObject & Sendable)? = nil) {
        let entry = MQTTCarriedMessage(message: message, carried: carried)
        let waiter = queue.state.withLock { state -> UnsafeContinuation<MQTTCarriedMessage?, Never>? in
            guard !state.finished else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pending.append(entry)
            return nil
        }
        waiter?.resume(returning: entry)
    }

    /// Ends the stream after the messages already queued.
    func finish() {
        queue.finish()
    }

    /// Runs `consume`, in which the calling task reads this stream, with the task's cancellation
    /// watched once for the whole of it instead of at every `next()`: cancelling the task ends the
    /// stream just as it ends for a cancelled consumer (what is queued is still handed out, then
    /// nil). A consumer that runs for the client's lifetime saves, per message, a cancellation
    /// handler and the executor switches around its closure. Other tasks must not read the stream
    /// meanwhile (a stream has a single consumer anyway).
    public func withCancellationWatched<R>(_ consume: () async throws -> R) async rethrows -> R {
        queue.state.withLock { $0.watched += 1 }
        defer { queue.state.withLock { $0.watched -= 1 } }
        return try await withTaskCancellationHandler {
            try await consume()
        } onCancel: {
            queue.cancel()
        }
    }

    /// The queue and the consumer waiting on it, shared by the stream, its iterator and the client.
    @usableFromInline
    final class Queue: Sendable {
        struct State {
            var pending: Deque<MQTTCarriedMessage> = []
            /// The consumer, suspended in `next()` until a message comes or the stream ends.
            var waiter: UnsafeContinuation<MQTTCarriedMessage?, Never>?
            var finished = false
            /// Scopes of ``MQTTMessageStream/withCancellationWatched(_:)`` open now: while one is,
            /// `next()` leaves cancellation to it.
            var watched = 0
            /// The watched consumer was cancelled while it was not waiting: its next `next()` ends
            /// the stream, after what was queued by then, as a consumer's own check would.
            var cancelled = false
            /// The consumer's callback of messages on the network thread, if it set one.
            var callback: MessageCallback?
        }

        /// What `next()` does, decided under the lock.
        private enum Step {
            case ready(MQTTCarriedMessage?)
            case wait
            case watchCancellation
        }

        let state = Mutex(State())

        @usableFromInline
        func next() async -> MQTTCarriedMessage? {
            let step = state.withLock { state -> Step in
                guard state.watched > 0 else { return .watchCancellation }
                if state.cancelled { state.finished = true }
                return state.take().map(Step.ready) ?? .wait
            }
            switch step {
            case let .ready(message): return message
            case .wait: return await withUnsafeContinuation { park($0) }
            case .watchCancellation: return await nextWatchingCancellation()
            }
        }

        /// Hands `continuation` what came since the lock was last held, or keeps it until
        /// ``MQTTMessageStream/yield(_:)`` or ``finish()``.
        private func park(_ continuation: UnsafeContinuation<MQTTCarriedMessage?, Never>) {
            let ready = state.withLock { state -> MQTTCarriedMessage?? in
                if state.cancelled { state.finished = true }
                if let ready = state.take() { return ready }
                precondition(
                    state.waiter == nil, "MQTTMessageStream has a single consumer; two tasks awaited next() at once")
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }

        /// `next()` for a consumer outside ``MQTTMessageStream/withCancellationWatched(_:)``: its
        /// cancellation is watched while it waits.
        private func nextWatchingCancellation() async -> MQTTCarriedMessage? {
            let cancelled = Task.isCancelled
            let ready = state.withLock { state -> MQTTCarriedMessage?? in
                // A cancelled consumer ends the stream: what is queued is still handed out, nothing more is taken.
                if cancelled { state.finished = true }
                return state.take()
            }
            if let ready { return ready }
            return await withTaskCancellationHandler {
                await withUnsafeContinuation { continuation in
                    let ready = state.withLock { state -> MQTTCarriedMessage?? in
                        if let ready = state.take() { return ready }
                        if Task.isCancelled {
                            state.finished = true
                            return .some(nil)
                        }
                        precondition(
                            state.waiter == nil,
                            "MQTTMessageStream has a single consumer; two tasks awaited next() at once")
                        state.waiter = continuation
                        return nil
                    }
                    if let ready { continuation.resume(returning: ready) }
                }
            } onCancel: {
                finish()
            }
        }

        /// The watched consumer's task was cancelled: a consumer waiting now gets nil at once; one
        /// busy with a message ends the stream at its next `next()`, still getting what came before it.
        func cancel() {
            let waiter = state.withLock { state -> UnsafeContinuation<MQTTCarriedMessage?, Never>? in
                state.cancelled = true
                guard let waiter = state.waiter else { return nil }
                state.finished = true
                state.waiter = nil
                return waiter
            }
            waiter?.resume(returning: nil)
        }

        /// Marks the stream finished and ends the wait of a consumer (who waits only when nothing is queued).
        func finish() {
            let waiter = state.withLock { state -> UnsafeContinuation<MQTTCarriedMessage?, Never>? in
                state.finished = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }
}

extension MQTTMessageStream.Queue.State {
    /// The next message, or `.some(nil)` once the stream has finished and is drained; nil when the
    /// consumer must wait.
    mutating func take() -> MQTTCarriedMessage?? {
        if let message = pending.popFirst() { return .some(message) }
        return finished ? .some(nil) : nil
    }
}

/// What the consumer's message callback did with a message (``MQTTClient/setMessageCallback(_:)``).
public enum MQTTMessageDisposition: Sendable {
    /// Handled in full on the network thread: the message never enters the stream.
    case consumed
    /// Queued in the stream as usual, with an object of the consumer's (nil: none) that the stream
    /// hands out with it (``MQTTMessageStream/carrying``). A reference, so that the disposition
    /// of every message is one word to copy, not a value of any size copied through its type's metadata.
    case passedOn(carrying: (any AnyObject & Sendable)?)
}

/// A message from ``MQTTMessageStream/carrying``, with the value the message callback passed it on with.
public struct MQTTCarriedMessage: Sendable {
    public var message: MQTTMessage
    /// What the callback passed the message on with; nil when it did not see the message or gave nothing.
    public var carried: (any AnyObject & Sendable)?

    public init(message: MQTTMessage, carried: (any AnyObject & Sendable)? = nil) {
        self.message = message
        self.carried = carried
    }
}
