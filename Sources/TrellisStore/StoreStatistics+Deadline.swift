import Synchronization

/// Statistics for an endpoint that must answer whatever the store does (`/metrics`, `trellis/stats`).
extension StoreStatistics {
    /// ``counts()``, or nil when the store has not answered within `limit` (or failed): a
    /// PostgreSQL pool waits in silence while its server is away, and a scrape must not wait with
    /// it. The question goes on in a task of its own, which ends by itself when the store answers
    /// or fails; its late answer is dropped.
    public func counts(within limit: Duration) async -> StoreCounts? {
        let answer = OnceAnswer<StoreCounts?>()
        return await withCheckedContinuation { continuation in
            answer.waiting(continuation)
            Task { answer.give(try? await self.counts()) }
            Task {
                try? await Task.sleep(for: limit)
                answer.give(nil)
            }
        }
    }
}

/// A continuation resumed by the first of several answers; the others are dropped.
private final class OnceAnswer<Value: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<Value, Never>?>(nil)

    package func waiting(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation.withLock { $0 = continuation }
    }

    package func give(_ value: Value) {
        continuation.withLock { current in
            defer { current = nil }
            return current
        }?.resume(returning: value)
    }
}
