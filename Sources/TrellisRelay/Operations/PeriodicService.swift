import Foundation
import ServiceLifecycle

/// A piece of upkeep run over and over while Trellis runs: `work`, then a wait of `interval()`
/// seconds (at least one; asked again after each run, so a reload applies), until a graceful
/// shutdown, which also ends a wait early.
public struct PeriodicService: Service {
    let interval: @Sendable () -> TimeInterval
    let work: @Sendable () async -> Void

    public init(interval: @escaping @Sendable () -> TimeInterval, work: @escaping @Sendable () async -> Void) {
        self.interval = interval
        self.work = work
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            await work()
            let wait = max(1, interval())
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
        }
    }
}
