import Foundation
import Synchronization
import TrellisStore

/// The store's reachability as the readiness probe sees it: asked at most once per interval, in
/// a task of its own, its result shared by every probe. A probe never waits longer than the
/// timeout for it: a check still running after that means a store that does not answer.
final class StoreCheck: Sendable {
    struct Result: Sendable {
        /// Why the store is not reachable; nil when it is.
        var error: String?
        /// Seconds since the check that gave this result began.
        var age: Double
    }

    private struct State {
        var error: String?
        var finished: ContinuousClock.Instant?
        var running: (started: ContinuousClock.Instant, task: Task<Void, Never>)?
    }

    private let state = Mutex(State())

    /// The latest result, starting a check when the last one began more than `interval` ago.
    func result(of store: any StoreStatistics, every interval: Duration, timeout: Duration) async -> Result {
        let now = ContinuousClock.now
        let running = state.withLock { state -> (started: ContinuousClock.Instant, task: Task<Void, Never>)? in
            if let running = state.running { return running }
            if let finished = state.finished, now - finished < interval { return nil }
            let task = Task { [self] in
                let problem: String?
                do {
                    try await store.checkReachable()
                    problem = nil
                } catch {
                    problem = StoreWriteHealth.cause(of: error)
                }
                self.state.withLock { current in
                    current.error = problem
                    current.finished = ContinuousClock.now
                    current.running = nil
                }
            }
            state.running = (now, task)
            return (now, task)
        }
        // Wait for a running check only up to the timeout from its start.
        if let running, case let remaining = timeout - (now - running.started), remaining > .zero {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await running.task.value }
                group.addTask { try? await Task.sleep(for: remaining) }
                await group.next()
                group.cancelAll()
            }
        }
        return state.withLock { state in
            let current = ContinuousClock.now
            if let running = state.running, current - running.started >= timeout {
                let seconds = Self.seconds(current - running.started)
                return Result(
                    error: "the state store has not answered for \(String(format: "%.1f", seconds)) s", age: seconds)
            }
            let age = state.finished.map { Self.seconds(current - $0) } ?? 0
            return Result(error: state.error, age: age)
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }
}
