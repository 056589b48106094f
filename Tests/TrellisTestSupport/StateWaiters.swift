import Synchronization

/// Tasks waiting, each with a timeout, until a condition on an actor's state holds: the waiting
/// half of ``MessageCollector`` (its messages) and ``PlantTrackerApp`` (what the app shows).
///
/// The owning actor calls ``settle(_:)`` with its state each time that state changes, and waits
/// with ``wait(on:timeout:until:failure:)``, which suspends until `settle` saw the condition hold or
/// the timeout passed, then checks the condition once more to tell which, and throws the owner's
/// own, descriptive ``TimeoutError``. Waiters are registered on the owner's actor
/// before it suspends, so a change that comes while a task starts to wait cannot be missed.
public final class StateWaiters<State>: Sendable {
    private struct Waiter: Sendable {
        let id: Int
        let condition: @Sendable (State) -> Bool
        let continuation: CheckedContinuation<Void, Never>
    }

    private let waiting = Mutex<(nextID: Int, waiters: [Waiter])>((0, []))

    public init() {}

    /// Suspends until ``settle(_:)`` is given a state for which `condition` holds, or until
    /// `timeout` has passed, whichever comes first.
    public func suspend(
        isolation: isolated (any Actor)? = #isolation,
        timeout: Duration,
        until condition: @escaping @Sendable (State) -> Bool
    ) async {
        var timer: Task<Void, Never>?
        await withCheckedContinuation(isolation: isolation) { continuation in
            let id = waiting.withLock { waiting in
                let id = waiting.nextID
                waiting.nextID += 1
                waiting.waiters.append(Waiter(id: id, condition: condition, continuation: continuation))
                return id
            }
            timer = Task {
                try? await Task.sleep(for: timeout)
                self.resume { $0.id == id }
            }
        }
        timer?.cancel()
    }

    /// The owner's wait: returns at once when `condition` holds for `state()`, else suspends until
    /// ``settle(_:)`` saw it hold or `timeout` passed, and throws a ``TimeoutError`` saying `failure()`
    /// when it still does not hold.
    public func wait(
        isolation: isolated (any Actor)? = #isolation,
        on state: () -> State, timeout: Duration,
        until condition: @escaping @Sendable (State) -> Bool,
        failure: () -> String
    ) async throws {
        if condition(state()) { return }
        await suspend(isolation: isolation, timeout: timeout, until: condition)
        guard condition(state()) else { throw TimeoutError(message: failure()) }
    }

    /// Resumes every waiter whose condition holds for `state`.
    public func settle(_ state: State) {
        resume { $0.condition(state) }
    }

    private func resume(where chosen: (Waiter) -> Bool) {
        let ready = waiting.withLock { waiting in
            let ready = waiting.waiters.filter(chosen)
            waiting.waiters.removeAll { waiter in ready.contains { $0.id == waiter.id } }
            return ready
        }
        for waiter in ready { waiter.continuation.resume() }
    }
}
