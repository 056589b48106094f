import Synchronization
import TrellisCore
import TrellisMQTTTypes

/// Where the relay's message loop puts the messages a retained sweep's subscriptions bring, so none
/// of them reaches the routes (where it would be an unknown topic).
///
/// The sweep publishes its marker twice: once after subscribing (the first marker comes after every
/// retained message those subscriptions brought: the reading is complete) and once after
/// unsubscribing (the second comes after every message delivered under them: nothing more can
/// come). Until the second marker the inbox takes every message on the sweep's filters, live ones
/// too (a config the relay publishes meanwhile comes back to it); after it, nothing. The markers of
/// earlier sweeps (one cut short by a stop leaves its subscriptions in the persistent session) are
/// taken whenever they come.
final class SweepInbox: Sendable {
    /// What the reading found: how many retained topics of Trellis's, and those stale by the facts
    /// read before it.
    struct Reading: Sendable {
        var count = 0
        var candidates: [String: RetainedSweepPlan.Subject] = [:]
    }

    private struct State {
        var reading = Reading()
        var markers = 0
        var waiters: [(markers: Int, continuation: CheckedContinuation<Void, any Error>)] = []
    }

    private let filters: [TopicFilter]
    private let plan: RetainedSweepPlan
    /// The topic of the sweep's markers, unique to the sweep.
    let marker: String
    /// Whether a retained topic is a candidate for clearing.
    private let isStale: @Sendable (RetainedSweepPlan.Subject) -> Bool
    private let state = Mutex(State())

    init(
        plan: RetainedSweepPlan, marker: String,
        isStale: @escaping @Sendable (RetainedSweepPlan.Subject) -> Bool = { _ in false }
    ) {
        self.plan = plan
        self.marker = marker
        self.isStale = isStale
        self.filters = plan.filters.map(TopicFilter.init)
    }

    /// Whether a message on `topic` may be the sweep's (its marker, an earlier sweep's marker, a
    /// topic its subscriptions cover), asked without changing anything: a message begun in the
    /// client's callback must not be one (``RelayService/handleOnNetworkThread(_:)``).
    func claims(_ topic: String) -> Bool {
        topic == marker || topic.hasPrefix("\(plan.trellisPrefix)/sweep/")
            || filters.contains { $0.match(topic) != nil }
    }

    /// Takes `message` when the sweep's subscriptions brought it (returns true: the loop routes it
    /// no further), counting a retained message of Trellis's and keeping
    /// it when it is a candidate.
    func offer(_ message: MQTTMessage) -> Bool {
        if message.topic == marker {
            let ready = state.withLock { state in
                state.markers += 1
                let markers = state.markers
                let ready = state.waiters.filter { $0.markers <= markers }.map(\.continuation)
                state.waiters.removeAll { $0.markers <= markers }
                return ready
            }
            for waiter in ready { waiter.resume() }
            return true
        }
        // A marker of an earlier sweep (one cut short by a stop, still in the broker's session).
        if message.topic.hasPrefix("\(plan.trellisPrefix)/sweep/") { return true }
        guard filters.contains(where: { $0.match(message.topic) != nil }) else { return false }
        let subject = message.retain && !message.payload.isEmpty ? plan.subject(of: message.topic) : nil
        let candidate = subject.map(isStale) ?? false
        return state.withLock { state in
            guard state.markers < 2 else { return false }
            if state.markers == 0, let subject {
                state.reading.count += 1
                if candidate { state.reading.candidates[message.topic] = subject }
            }
            return true
        }
    }

    /// What the reading found, once the first marker came.
    func read() async throws -> Reading {
        try await markers(1)
        return state.withLock { $0.reading }
    }

    /// Returns once the second marker came: every message of the sweep's subscriptions is in.
    func drained() async throws {
        try await markers(2)
    }

    /// Waits until `count` markers came; throws `CancellationError` when cancelled first.
    private func markers(_ count: Int) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Checked under the lock the cancellation handler takes: a cancellation before this
                // point is seen here, one after it finds the waiter.
                let outcome = state.withLock { state -> Bool? in
                    if state.markers >= count { return true }
                    if Task.isCancelled { return false }
                    state.waiters.append((count, continuation))
                    return nil
                }
                switch outcome {
                case true?: continuation.resume()
                case false?: continuation.resume(throwing: CancellationError())
                case nil: break
                }
            }
        } onCancel: {
            let waiting = state.withLock { state in
                defer { state.waiters.removeAll { $0.markers == count } }
                return state.waiters.filter { $0.markers == count }.map(\.continuation)
            }
            for waiter in waiting { waiter.resume(throwing: CancellationError()) }
        }
    }
}
