import ServiceLifecycle
import Synchronization
import UnixSignals

/// Catches SIGINT and SIGTERM from the moment `trellis run` starts, while the state opens and the
/// broker starts, until its service group handles them itself.
///
/// Without it a Ctrl-C in the first moments would be lost (or would kill Trellis and leave its
/// broker behind); with it, the group shuts down gracefully as soon as it runs, stopping the
/// broker it was given.
package final class StartupSignals: Sendable {
    private struct State {
        var group: ServiceGroup?
        var received = false
    }

    private let state = Mutex(State())

    private init() {}

    /// Starts trapping the two signals.
    package static func trap() async -> StartupSignals {
        let trap = StartupSignals()
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        Task {
            for await _ in signals { await trap.received() }
        }
        return trap
    }

    /// True once SIGINT or SIGTERM came before the group took over.
    package var wasSignalled: Bool { state.withLock { $0.received } }

    /// Hands later signals to `group`, and asks it to shut down at once if one came already.
    package func handOver(to group: ServiceGroup) async {
        let received = state.withLock { state in
            state.group = group
            return state.received
        }
        if received { await group.triggerGracefulShutdown() }
    }

    private func received() async {
        let group = state.withLock { state in
            state.received = true
            return state.group
        }
        await group?.triggerGracefulShutdown()
    }
}
