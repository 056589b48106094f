import CMosquitto
import Foundation
import Logging
import Synchronization

/// An MQTT v5 client over libmosquitto.
///
/// One dedicated thread runs libmosquitto's network loop: it connects, reconnects with backoff,
/// resubscribes everything in `subscriptions` after each reconnect, and copies each incoming
/// message into `messages`, unless the consumer's message callback consumes it
/// (``setMessageCallback(_:)``). Every other method may be called from any thread or task.
public final class MQTTClient: Sendable {
    /// Incoming messages, in arrival order. Single consumer; buffered without limit so the network
    /// thread never blocks and nothing is dropped.
    public let messages = MQTTMessageStream()
    /// Connection changes, for logs and health.
    public let events: AsyncStream<MQTTConnectionEvent>

    let configuration: MQTTConfiguration
    let logger: Logger
    let handle: MosquittoHandle
    let acks = AckTable()
    let state: Mutex<ClientState>
    /// When the network loop last went round, ``BootClock/nanoseconds`` (0: not yet).
    let heartbeat = Atomic<UInt64>(0)
    /// Whether the last message delivered came at QoS 0: only then does the network thread give up
    /// its core once before it waits (``waitForEvents(_:)``). Written and read on the network thread.
    let lastMessageAtMostOnce = Atomic<Bool>(true)
    /// Whether the current attempt's TCP connection has been seen made: what an attempt that timed
    /// out was waiting for (the network thread's alone).
    let transportSeen = Atomic<Bool>(false)
    let executor = NetworkThreadExecutor()
    private let eventSink: AsyncStream<MQTTConnectionEvent>.Continuation

    /// Mutable state shared by the network thread and callers.
    struct ClientState {
        var subscriptions: [String: MQTTSubscription] = [:]
        /// The CONNACK of the current connection arrived (packets may be sent).
        var connected = false
        /// Connected, and the broker acknowledged every resubscription of this connection.
        var ready = false
        /// Message ids of this connection's resubscriptions still waiting for their SUBACK.
        var pendingResubscriptions: Set<Int32> = []
        /// Successful connections so far; names the connection a received message came on.
        var connections = 0
        /// Why the latest connection attempt failed, for the error of `waitUntilConnected`.
        var lastFailure: String?
        /// The broker's refusal of this attempt's CONNECT, in its words, until the loop reports it.
        var refusal: String?
        /// The session-present flag of the current connection.
        var sessionResumed = false
        var started = false
        var stopping = false
        var connectWaiters: [UUID: CheckedContinuation<Void, Never>] = [:]
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
        var loopFinished = false
        /// Messages handed to the consumer and not yet handled.
        var window: ReadAheadWindow
        /// Messages handed to the consumer since the client started.
        var delivered = 0
        /// Messages the consumer reported handled (``messageHandled()``) since the client started.
        var handled = 0
        /// How the last bursts of reads went, which decides when a burst's answers are written.
        var pace = BurstPace()
        /// `stopReceiving()` was called: read nothing more and end `messages` once drained.
        var receiveStopped = false
        var streamFinished = false
    }

    /// Creates a client; nothing touches the network until `start()`.
    public init(configuration: MQTTConfiguration, logger: Logger = Logger(label: "trellis.mqtt")) throws {
        self.configuration = configuration
        self.logger = logger
        (events, eventSink) = AsyncStream.makeStream(
            of: MQTTConnectionEvent.self, bufferingPolicy: .bufferingNewest(64))
        state = Mutex(ClientState(window: ReadAheadWindow(limit: configuration.maxUnhandledMessages)))
        let box = CallbackBox()
        handle = try MosquittoHandle(configuration: configuration, callbacks: box.callbacks)
        box.client = self
    }

    deinit {
        messages.finish()
        eventSink.finish()
    }

    /// Starts the network thread, which connects and keeps reconnecting until `shutdown()`.
    public func start() {
        let alreadyStarted = state.withLock { state in
            defer { state.started = true }
            return state.started
        }
        guard !alreadyStarted else { return }
        let thread = Thread { [self] in runNetworkLoop() }
        thread.name = "trellis.mqtt.\(configuration.clientID)"
        thread.start()
    }

    /// Runs tasks on the network thread, between two passes of its loop. A consumer of `messages`
    /// that prefers it (`withTaskExecutorPreference`) handles each message and publishes its
    /// answer without a thread hop. Code running there must not block: it holds up all traffic.
    public var taskExecutor: any TaskExecutor { executor }

    /// Interrupts the network thread's wait, so it writes what was just queued or reads again;
    /// not needed on that thread itself, which looks again after each job.
    func wakeNetworkThread() {
        if !executor.isCurrentThread { executor.wake() }
    }

    /// True while a connection is up and the broker has acknowledged every kept subscription on it.
    public var isConnected: Bool { state.withLock { $0.ready } }

    /// Seconds since the network thread last went round its loop (it does at least once a second,
    /// connected or not, and runs the message handling's jobs); nil before it started. A value
    /// that keeps growing means the thread is stuck: what a liveness probe and a watchdog ask.
    public var secondsSinceNetworkLoopRan: Double? {
        let beat = heartbeat.load(ordering: .relaxed)
        guard beat > 0 else { return nil }
        let now = BootClock.nanoseconds
        return Double(now > beat ? now - beat : 0) / 1e9
    }

    /// Notes that the network loop went round (``BootClock``: the loop goes round for every message).
    func beat() {
        heartbeat.store(max(1, BootClock.nanoseconds), ordering: .relaxed)
    }

    /// Suspends until the client is connected and subscribed (see ``isConnected``), or throws `timedOut`.
    public func waitUntilConnected(timeout: Duration = .seconds(10)) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                let id = UUID()
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        let ready = self.state.withLock { state -> Bool in
                            if state.ready || state.stopping || Task.isCancelled { return true }
                            state.connectWaiters[id] = continuation
                            return false
                        }
                        if ready { continuation.resume() }
                    }
                } onCancel: {
                    self.state.withLock { $0.connectWaiters.removeValue(forKey: id) }?.resume()
                }
                if !self.isConnected {
                    throw MQTTError(kind: .shutDown, message: "the MQTT client stopped before it connected")
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                let last = self.state.withLock { $0.lastFailure }
                throw MQTTError(
                    kind: .timedOut,
                    message: "no connection to \(self.configuration.address) within \(timeout)"
                        + (last.map { "; the last attempt: \($0)" } ?? ""))
            }
            try await group.next()
            group.cancelAll()
        }
    }

    func emit(_ event: MQTTConnectionEvent) {
        if case let .connectFailed(reason, _) = event { state.withLock { $0.lastFailure = reason } }
        eventSink.yield(event)
    }
    func deliver(_ message: MQTTMessage, packetID: Int32) {
        guard message.qos > .atMostOnce, packetID > 0 else { return offer(message) }
        var message = message
        let (connection, resumed) = state.withLock { ($0.connections, $0.sessionResumed) }
        message.delivery = MQTTDelivery(packetID: Int(packetID), connection: connection, sessionResumed: resumed)
        offer(message)
    }

    /// Hands `message` to the message callback when it may take it, else to the stream; a message
    /// the callback passes on enters the stream with the value it passed it on with.
    private func offer(_ message: MQTTMessage) {
        lastMessageAtMostOnce.store(message.qos == .atMostOnce, ordering: .relaxed)
        var carried: (any AnyObject & Sendable)?
        if message.qos <= .atLeastOnce, let callback = messages.idleConsumerCallback() {
            switch callback.take(message) {
            case .consumed:
                // Handled before the consumer would have been woken for it: nothing is outstanding in the
                // window, and the burst goes on as after any message handed over.
                state.withLock { $0.delivered += 1 }
                return
            case let .passedOn(value):
                carried = value
            }
        }
        state.withLock { state in
            state.window.delivered(size: message.payload.count)
            state.delivered += 1
        }
        messages.yield(message, carrying: carried)
    }

    /// Lets the consumer of ``messages`` see a QoS 0 or QoS 1 message on the network thread, in
    /// libmosquitto's message callback, instead of being woken for it: `callback` is called only
    /// while the consumer waits in `next()` with nothing queued, so every message before it has
    /// been taken and the message is handled in its turn. It returns ``MQTTMessageDisposition/consumed``
    /// when it handled the message in full, which then never enters the stream and takes no room in
    /// the read-ahead window; ``MQTTMessageDisposition/passedOn(carrying:)`` to have it queued as
    /// usual, with a value of the consumer's that ``MQTTMessageStream/carrying`` hands out with it
    /// (what the callback began of the message, for the consumer to finish).
    ///
    /// A QoS 1 message it consumes (with its ``MQTTMessage/delivery``) is acknowledged with the next
    /// write, so the callback consumes one only when it has fully handled it: nothing of its handling
    /// is left to commit. Whenever libmosquitto queues the acknowledgement (before the callback, in
    /// 2.0), nothing is written before the callback returns: a message passed on enters the read-ahead
    /// window first, which holds the writes, and a consumer that waits has every message before
    /// it acknowledged.
    ///
    /// It runs while the network thread reads: it must not block or wait (brief locks only). What it
    /// publishes is queued by libmosquitto and written by the network loop's next pass (at once after
    /// a burst of one message), and only while the consumer holds no message: a QoS 1 message read
    /// later in the same burst holds it back until that message is handled. The consumer must wait
    /// in `next()` only once it has handled every message it took, or a message handled here would
    /// overtake one it still holds. A consumer that answers from memory (a
    /// relay whose state is held in this process) then pays for no task switch per message. Nil
    /// removes it; set it only while consuming the stream, and through ``MQTTMessageStream/carrying``
    /// when the callback passes messages on with a value: the plain iterator hands out the message
    /// alone, and what the callback began of it would be lost.
    public func setMessageCallback(_ callback: (@Sendable (MQTTMessage) -> MQTTMessageDisposition)?) {
        messages.setMessageCallback(callback)
    }

    /// Writes what libmosquitto has queued.
    func writeQueued() -> Int32 { handle.loopWrite() }

    /// Tells the client that the oldest message from `messages` not yet reported has been fully
    /// handled (its state change committed), so its acknowledgement may leave and the network
    /// thread may read more. Required, once per message and in order, when
    /// `maxUnhandledMessages` is set; ignored otherwise.
    public func messageHandled() {
        let wake = state.withLock { state in
            state.handled &+= 1
            return state.window.handled()
        }
        if wake { wakeNetworkThread() }
    }

    /// How far the consumer has got: the messages it holds now (of every connection) and how many it
    /// has reported handled so far. Two readings with the same `handled` while it held messages at
    /// both mean it handled nothing in between: what a watch for a stuck consumer samples.
    public var consumerProgress: (held: Int, handled: Int) {
        state.withLock { ($0.window.count, $0.handled) }
    }

    /// What the network loop may do now: write (the consumer holds no message) and read (the
    /// window has room, writes are not waiting, and `stopReceiving()` was not called).
    func flowControl(writesPending: Bool) -> (mayWrite: Bool, mayRead: Bool) {
        state.withLock { state in
            (state.window.mayWrite, !state.receiveStopped && state.window.mayRead(writesPending: writesPending))
        }
    }

    /// True while the consumer holds a message, so nothing may be written (see ``ReadAheadWindow``).
    var writesHeld: Bool {
        state.withLock { !$0.window.mayWrite }
    }

    /// Stops reading from the broker while staying connected (publishes still go out): the
    /// messages already received stay in `messages`, which ends after them. For a graceful
    /// shutdown that finishes the messages in hand and takes no new ones.
    public func stopReceiving() {
        state.withLock { $0.receiveStopped = true }
        executor.wake()
    }

    /// Ends `messages` from the network thread, between two reads, once receiving has stopped:
    /// no callback can deliver a message after that.
    func finishStreamIfStopped() {
        let finish = state.withLock { state -> Bool in
            guard state.receiveStopped, !state.streamFinished else { return false }
            state.streamFinished = true
            return true
        }
        if finish { messages.finish() }
    }
    func finishStreams() {
        messages.finish()
        eventSink.finish()
    }
}

/// Lets the C callbacks reach the client without a retain cycle through the handle.
///
/// The reference is neither retained nor weak: libmosquitto calls back only from within the calls
/// the client makes on its handle (the network loop's reads, writes and housekeeping, its connect,
/// publish and subscribe), so the client is alive whenever a callback runs; the handle dies with
/// the client and `mosquitto_destroy` calls nothing back. A weak reference would cost a lock, a
/// weak load and a release on every message and every acknowledgement.
private final class CallbackBox: @unchecked Sendable {
    /// Set once, in the client's initializer, before the network thread exists.
    unowned(unsafe) var client: MQTTClient?

    var callbacks: MosquittoCallbacks {
        MosquittoCallbacks(
            message: { [self] message, packetID in client?.deliver(message, packetID: packetID) },
            connect: { [self] reason, session in client?.didConnect(reason: reason, sessionPresent: session) },
            disconnect: { [self] reason in client?.didDisconnect(reason: reason) },
            publish: { [self] mid, reason in client?.didPublish(mid: mid, reason: reason) },
            subscribe: { [self] mid, granted in client?.didSubscribe(mid: mid, granted: granted) }
        )
    }
}
