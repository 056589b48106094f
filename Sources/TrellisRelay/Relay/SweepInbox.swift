import Synchronization
import TrellisCore
import TrellisMQTTTypes

/// Where the relay's message loop puts the messages a retained sweep subscribed to, while it runs:
/// retained messages on the sweep's filters (collected when they are Trellis's, dropped otherwise,
/// so a foreign config never reaches the routes as an unknown topic) and the sweep's marker, which
/// ends the reading.
final class SweepInbox: Sendable {
    private struct State {
        var found: [String: RetainedSweepPlan.Subject] = [:]
        var done = false
        var waiter: CheckedContinuation<[String: RetainedSweepPlan.Subject], any Error>?
    }

    private let filters: [TopicFilter]
    private let plan: RetainedSweepPlan
    private let marker: String
    private let state = Mutex(State())

    init(plan: RetainedSweepPlan, marker: String) {
        self.plan = plan
        self.marker = marker
        self.filters = plan.filters.map(TopicFilter.init)
    }

    /// Takes `message` when it is the sweep's (returns true: the loop routes it no further).
    func offer(_ message: MQTTMessage) -> Bool {
        if message.topic == marker {
            let (waiter, found) = state.withLock { state in
                state.done = true
                defer { state.waiter = nil }
                return (state.waiter, state.found)
            }
            waiter?.resume(returning: found)
            return true
        }
        guard message.retain, filters.contains(where: { $0.match(message.topic) != nil }) else { return false }
        if !message.payload.isEmpty, let subject = plan.subject(of: message.topic) {
            state.withLock { $0.found[message.topic] = subject }
        }
        return true
    }

    /// The retained topics found, once the marker came.
    func read() async throws -> [String: RetainedSweepPlan.Subject] {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let found = state.withLock { state -> [String: RetainedSweepPlan.Subject]? in
                    if state.done { return state.found }
                    state.waiter = continuation
                    return nil
                }
                if let found { continuation.resume(returning: found) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Ends a read still waiting (the time limit, a stop).
    func cancel() {
        let waiter = state.withLock { state in
            state.done = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(throwing: CancellationError())
    }
}
