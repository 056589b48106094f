import Synchronization

/// Tells a bridge's forwarder that messages were kept for it: each committed batch that held one of
/// its bridge's messages calls the forwarder's observer once.
///
/// Without it the forwarder finds what was kept only at its next look at the store (every 100 ms),
/// and a live message waits for that look. It is told by the write-behind that committed the batch,
/// in this process; a relay of a share group that forwards for messages its peers kept still
/// finds those at its look.
package final class ForwardsKept: Sendable {
    private struct Observer {
        let bridge: String
        let told: @Sendable () -> Void
    }
    private struct State {
        var observers: [Int: Observer] = [:]
        var nextID = 0
    }
    private let state = Mutex(State())

    package init() {}

    /// Calls `told` after each committed batch that kept messages for `bridge`, from the task that
    /// committed it (so `told` must be quick: a flag set, a task woken), until the observation ends.
    package func observe(bridge: String, _ told: @escaping @Sendable () -> Void) -> ForwardsKeptObservation {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.observers[state.nextID] = Observer(bridge: bridge, told: told)
            return state.nextID
        }
        return ForwardsKeptObservation { [weak self] in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
    }

    /// A batch committed: the observers of the bridges whose messages it held are told. A relay
    /// without a forwarder observing (no bridge) does no more per batch than this one look.
    package func committed(_ batch: [BufferedWrite]) {
        guard state.withLock({ !$0.observers.isEmpty }) else { return }
        let bridges = Set(batch.compactMap(\.forwardBridge))
        guard !bridges.isEmpty else { return }
        let told = state.withLock { state in
            state.observers.values.filter { bridges.contains($0.bridge) }.map(\.told)
        }
        for observer in told { observer() }
    }
}

/// An observation of ``ForwardsKept``: it ends when ``end()`` is called or when it is released,
/// whichever comes first.
public final class ForwardsKeptObservation: Sendable {
    private let ending: Mutex<(@Sendable () -> Void)?>

    package init(end: @escaping @Sendable () -> Void) {
        ending = Mutex(end)
    }

    /// Ends the observation: its observer is told of no commit that begins telling after this
    /// returns (one already telling, which took the observers a moment before, may still call it once).
    public func end() {
        ending.withLock { ending in
            defer { ending = nil }
            return ending
        }?()
    }

    deinit { end() }
}
