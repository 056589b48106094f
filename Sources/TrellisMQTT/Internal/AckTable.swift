import Synchronization

/// Matches broker acknowledgements (PUBACK, SUBACK) with the tasks waiting for them.
///
/// A message id is only known once libmosquitto has queued the packet, and the ack may come back
/// on the network thread before the waiting task has registered. While a registration is in
/// progress, acks for unknown ids are parked; otherwise they are dropped, so fire-and-forget
/// publishes leave nothing behind. No lock is ever held across a call into the library.
final class AckTable: Sendable {
    typealias Outcome = Result<[Int32], MQTTError>

    /// Who waits for an ack: a task, or a callback run where the ack is read (the network thread).
    private enum Waiter {
        case task(CheckedContinuation<[Int32], any Error>)
        case callback(@Sendable (Outcome) -> Void)

        func resume(_ outcome: Outcome) {
            switch self {
            case let .task(continuation): continuation.resume(with: outcome.mapError { $0 as any Error })
            case let .callback(body): body(outcome)
            }
        }
    }

    private struct State {
        var waiting: [Int32: Waiter] = [:]
        var early: [Int32: Outcome] = [:]
        var registering = 0
        var closed = false
    }

    private let state = Mutex(State())
    /// Registrations in progress plus tasks waiting, kept in step under the lock: zero lets
    /// ``complete(_:with:)`` drop an ack without taking the lock, as it does for every QoS 0
    /// publish. A registration is counted before its packet is queued, so its ack, read later on
    /// the network thread, finds the count raised.
    private let interest = Atomic<Int>(0)

    /// Stores the count ``interest`` reads; called under the lock after each change.
    private func noteInterest(_ state: borrowing State) {
        interest.store(state.registering + state.waiting.count, ordering: .releasing)
    }

    /// Tasks waiting now, and the count ``complete(_:with:)`` reads: for the tests, which must know
    /// that a task waits before they deliver its ack, and that nothing is left counted after.
    var waitingCount: Int { state.withLock { $0.waiting.count } }
    var interestCount: Int { interest.load(ordering: .acquiring) }

    /// Announces that a caller is about to queue a packet it will wait for.
    func beginRegistration() {
        state.withLock { state in
            state.registering += 1
            noteInterest(state)
        }
    }

    /// Cancels an announced registration whose packet could not be queued.
    func abandonRegistration() {
        state.withLock { state in
            state.registering -= 1
            if state.registering == 0 { state.early.removeAll() }
            noteInterest(state)
        }
    }

    /// Waits for the ack of `mid`, which was announced with `beginRegistration()`.
    func wait(for mid: Int32) async throws -> [Int32] {
        try await withTaskCancellationHandler {
            try await suspend(for: mid)
        } onCancel: {
            // Only a task's own wait: a callback under the same packet id (ids wrap) stays.
            let waiting = state.withLock { state -> CheckedContinuation<[Int32], any Error>? in
                defer { noteInterest(state) }
                guard case let .task(continuation)? = state.waiting[mid] else { return nil }
                state.waiting[mid] = nil
                return continuation
            }
            waiting?.resume(throwing: CancellationError())
        }
    }

    private func suspend(for mid: Int32) async throws -> [Int32] {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Outcome? = state.withLock { state in
                state.registering -= 1
                defer {
                    if state.registering == 0 { state.early.removeAll() }
                    noteInterest(state)
                }
                if state.closed {
                    return .failure(MQTTError(kind: .shutDown, message: "the MQTT client was shut down"))
                }
                if Task.isCancelled {
                    return .failure(
                        MQTTError(kind: .timedOut, message: "stopped waiting for the broker's acknowledgement"))
                }
                if let outcome = state.early.removeValue(forKey: mid) { return outcome }
                state.waiting[mid] = .task(continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready.mapError { $0 as any Error }) }
        }
    }

    /// Calls `body` with the ack of `mid`, which was announced with `beginRegistration()`: on the
    /// network thread when it is read, or at once when it came already or the client was shut down.
    func notify(for mid: Int32, _ body: @escaping @Sendable (Outcome) -> Void) {
        let ready: Outcome? = state.withLock { state in
            state.registering -= 1
            defer {
                if state.registering == 0 { state.early.removeAll() }
                noteInterest(state)
            }
            if state.closed { return .failure(MQTTError(kind: .shutDown, message: "the MQTT client was shut down")) }
            if let outcome = state.early.removeValue(forKey: mid) { return outcome }
            state.waiting[mid] = .callback(body)
            return nil
        }
        if let ready { body(ready) }
    }

    /// Delivers an ack from the network thread. `outcome` is made only when someone waits for it
    /// or may yet register: most acks (every QoS 0 publish's) belong to fire-and-forget publishes.
    func complete(_ mid: Int32, with outcome: @autoclosure () -> Outcome) {
        guard interest.load(ordering: .acquiring) > 0 else { return }
        let waiter = state.withLock { state -> Waiter? in
            if !state.waiting.isEmpty, let waiting = state.waiting.removeValue(forKey: mid) {
                noteInterest(state)
                return waiting
            }
            if state.registering > 0 { state.early[mid] = outcome() }
            return nil
        }
        waiter?.resume(outcome())
    }

    /// Fails every waiting task; used at shutdown.
    func failAll(_ error: MQTTError) {
        let all = state.withLock { state -> [Waiter] in
            state.closed = true
            defer {
                state.waiting.removeAll()
                noteInterest(state)
            }
            return Array(state.waiting.values)
        }
        for waiter in all { waiter.resume(.failure(error)) }
    }
}
