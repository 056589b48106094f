import Synchronization

/// Tells a bridge's forwarder that messages were kept for it: each bridge's count of committed
/// batches that held one of its messages, and the waits for it to move.
///
/// Without it the forwarder finds what was kept only at its next look at the store (every 100 ms),
/// and a live message waits for that look. It is told by the write-behind that committed the batch,
/// in this process; a relay of a share group that forwards for messages its peers kept still
/// finds those at its look.
package final class ForwardsKept: Sendable {
    private struct Waiter {
        let bridge: String
        let continuation: CheckedContinuation<Void, Never>
        /// Ends the wait after its limit; cancelled when the count moves first.
        var timer: Task<Void, Never>?
    }
    private struct State {
        var counts: [String: UInt64] = [:]
        var waiters: [Int: Waiter] = [:]
        var nextID = 0
    }
    private let state = Mutex(State())

    package init() {}

    /// How many committed batches held a message for `bridge` so far.
    package func count(bridge: String) -> UInt64 {
        state.withLock { $0.counts[bridge] ?? 0 }
    }

    /// A batch committed: the bridges whose messages it held move on, and their waits end.
    package func committed(_ batch: [BufferedWrite]) {
        let bridges = Set(batch.compactMap(\.forwardBridge))
        guard !bridges.isEmpty else { return }
        let woken = state.withLock { state in
            for bridge in bridges { state.counts[bridge, default: 0] += 1 }
            let ids = state.waiters.filter { bridges.contains($0.value.bridge) }.keys
            return ids.compactMap { state.waiters.removeValue(forKey: $0) }
        }
        for waiter in woken {
            waiter.timer?.cancel()
            waiter.continuation.resume()
        }
    }

    /// Returns once the count of `bridge` is past `seen` (at once when it already is), or after
    /// `limit`, whichever comes first. Whoever takes the waiter out of the state (the commit or
    /// the timer) resumes it, so it is resumed once.
    package func wait(bridge: String, past seen: UInt64, limit: Duration) async {
        await withCheckedContinuation { continuation in
            let id: Int? = state.withLock { state in
                guard state.counts[bridge] ?? 0 <= seen else { return nil }
                defer { state.nextID += 1 }
                state.waiters[state.nextID] = Waiter(bridge: bridge, continuation: continuation)
                return state.nextID
            }
            guard let id else { return continuation.resume() }
            let timer = Task {
                try? await Task.sleep(for: limit)
                self.state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
            }
            let ended = state.withLock { state in
                state.waiters[id]?.timer = timer
                return state.waiters[id] == nil
            }
            if ended { timer.cancel() }
        }
    }
}
