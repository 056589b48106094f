/// Running an operation that waits on the broker with a bound, so a lost acknowledgement or a
/// broker that never answers cannot hold a lock or a start for good.
enum TimeLimit {
    /// Runs `body`, cancelling it and throwing ``TimeLimitExceeded`` if it takes longer than `limit`.
    static func run<Value: Sendable>(within limit: Duration, _ body: @escaping @Sendable () async throws -> Value)
        async throws -> Value
    {
        try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else { throw TimeLimitExceeded(limit: limit) }
            return value
        }
    }
}

/// An operation bounded by ``TimeLimit`` did not finish in time.
struct TimeLimitExceeded: Error, CustomStringConvertible {
    let limit: Duration
    var description: String { "no answer from the broker within \(limit)" }
}
