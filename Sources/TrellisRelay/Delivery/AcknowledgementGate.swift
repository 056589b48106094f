import Logging
import Synchronization
import TrellisStore

/// Holds each handled message's acknowledgement until the changes its handling wrote behind are
/// committed: the relay side of the write-behind rule (see `WriteBehindBuffer`).
///
/// After handling a message the relay passes the store's queued position: every change the
/// message queued behind is at or before it. When that position is committed already (nothing
/// was written behind, or its batch committed) and no earlier message waits, the message is
/// acknowledged at once. Otherwise it waits in line; one task waits for the store to commit each
/// position in turn (which starts the batch at once, so waiting adds no delay) and then
/// acknowledges the messages up to it, in order. While a commit fails and is retried, the
/// messages stay unacknowledged and the client reads nothing more (flow control), so the broker
/// keeps them until Trellis commits or restarts.
final class AcknowledgementGate: Sendable {
    private struct State {
        /// Positions of the messages waiting, oldest first (at most the client's window).
        var waiting: [UInt64] = []
        var worker: Task<Void, Never>?
        /// The store stopped retrying: nothing held will be acknowledged any more.
        var stopped = false
    }

    private let store: any TrellisStore
    private let acknowledge: @Sendable () -> Void
    private let state = Mutex(State())

    /// A gate over `store`'s commits, calling `acknowledge` once per message, in order.
    init(store: any TrellisStore, acknowledge: @escaping @Sendable () -> Void) {
        self.store = store
        self.acknowledge = acknowledge
    }

    /// Messages handled and not yet acknowledged.
    var held: Int { state.withLock { $0.waiting.count } }

    /// A message was handled; `position` is the store's queued position after its handling.
    func handled(through position: UInt64) {
        let now = state.withLock { state -> Bool in
            if state.waiting.isEmpty && store.isCommitted(through: position) { return true }
            state.waiting.append(position)
            if state.worker == nil {
                state.worker = Task { await self.work() }
            }
            return false
        }
        if now { acknowledge() }
    }

    /// Acknowledges waiting messages as their positions commit, until none waits.
    private func work() async {
        while true {
            let next = state.withLock { state -> UInt64? in
                guard let first = state.waiting.first else {
                    state.worker = nil
                    return nil
                }
                return first
            }
            guard let position = next else { return }
            guard await store.waitUntilCommitted(through: position) else {
                state.withLock { $0.stopped = true }
                return
            }
            let count = state.withLock { state -> Int in
                var count = 0
                while let first = state.waiting.first, store.isCommitted(through: first) {
                    state.waiting.removeFirst()
                    count += 1
                }
                return count
            }
            for _ in 0..<count { acknowledge() }
        }
    }

    /// At shutdown: waits until every held message is acknowledged, for at most `patience` while
    /// the store cannot commit. Messages still held then stay unacknowledged (the broker sends them
    /// again) and their number is returned.
    func settle(patience: Duration) async -> Int {
        var deadline: ContinuousClock.Instant?
        while true {
            let (count, worker, stopped) = state.withLock { ($0.waiting.count, $0.worker, $0.stopped) }
            if count == 0 || stopped { return count }
            let failing = await !store.writeStatus().writable
            let now = ContinuousClock.now
            if failing {
                let limit = deadline ?? now + patience
                deadline = limit
                if now >= limit {
                    worker?.cancel()
                    return count
                }
            } else {
                deadline = nil
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
