import Foundation
import Logging
import TrellisCore
import TrellisMQTT
import TrellisStore

/// Keeps the retained state topics equal to the store when several relays publish them.
///
/// Two relays of a share group that change one button close together each publish its retained
/// state from their own transaction, and the broker may take the older publish last. So after a
/// relay publishes a state topic, and once that topic has been quiet for ``quietPeriod``, it
/// publishes the state again, read from the store now, while holding the store's shared lock for
/// the topic, and waits for the broker's acknowledgement before releasing it.
///
/// Why that suffices: every change is followed by its relay's reconcile, which reads after the
/// change committed. Reconciles of one topic run one at a time, each acknowledged by the broker
/// before the next starts, so the last one reads the final state and is the last publish of that
/// topic the broker takes (a relay's earlier publishes precede its reconcile on its connection).
/// A relay alone on its topics (no share group) needs none of this and has no reconciler.
actor RetainedStateReconciler {
    /// How long a topic must be quiet before it is reconciled: a burst costs one reconcile.
    let quietPeriod: Duration
    private let lock: any SharedLocking
    private let client: MQTTClient
    private let logger: Logger
    /// Topics waiting for their quiet period to end, with the engine to read them through.
    private var due: [String: (deadline: ContinuousClock.Instant, engine: RelayEngine)] = [:]
    /// The one task reconciling, one topic at a time: the relay's message handling must always find
    /// a free database connection, so reconciles (each holding one while it waits for the shared
    /// lock and the broker's acknowledgement) never take more than one.
    private var worker: Task<Void, Never>?

    init(lock: any SharedLocking, client: MQTTClient, logger: Logger, quietPeriod: Duration = .milliseconds(100)) {
        self.lock = lock
        self.client = client
        self.logger = logger
        self.quietPeriod = quietPeriod
    }

    /// Notes that `message` was published; a retained state topic is reconciled once quiet.
    nonisolated func published(_ message: MQTTMessage, engine: RelayEngine) {
        guard message.retain, RetainedState.kind(of: message.topic, settings: engine.settings) != nil else { return }
        // Not inheriting the handling's outage waiting: a reconcile holds its lock's transaction while it
        // reads, and fails rather than waits out an outage (the next change reconciles the topic again).
        Task { await OutageWaiting.$enabled.withValue(false) { await self.note(message.topic, engine: engine) } }
    }

    private func note(_ topic: String, engine: RelayEngine) {
        due[topic] = (ContinuousClock.now + quietPeriod, engine)
        if worker == nil { worker = Task { await self.work() } }
    }

    /// Reconciles due topics, the earliest first, until none waits.
    private func work() async {
        while !Task.isCancelled, let next = due.min(by: { $0.value.deadline < $1.value.deadline }) {
            if next.value.deadline > ContinuousClock.now {
                try? await Task.sleep(until: next.value.deadline)
                continue
            }
            due[next.key] = nil
            await reconcile(next.key, engine: next.value.engine)
        }
        worker = nil
    }

    private func reconcile(_ topic: String, engine: RelayEngine, awaitingAck: Bool = true) async {
        let client = self.client
        do {
            try await lock.withSharedLock(topic) {
                guard
                    let payload = try await RetainedState.current(topic, store: engine.store, settings: engine.settings)
                else { return }
                if awaitingAck {
                    // The acknowledgement may wait behind the relay's own queued publishes (a burst's
                    // states and fan-outs); bounded so a lost one never holds the lock for good.
                    try await TimeLimit.run(within: .seconds(10)) {
                        try await client.publishAndWait(topic: topic, payload: payload, qos: .atLeastOnce, retain: true)
                    }
                } else {
                    try client.publish(topic: topic, payload: payload, qos: .atLeastOnce, retain: true)
                }
            }
        } catch {
            logger.warning(
                "could not republish a retained state from the store",
                metadata: ["topic": "\(topic)", "error": "\(error)"])
        }
    }

    /// At a stop, once receiving stopped: reconciles every topic still waiting for its quiet period
    /// now, without waiting for acknowledgements (they are no longer read; the publishes are
    /// written before the DISCONNECT, so the broker still takes them).
    func finish() async {
        worker?.cancel()
        let waiting = due
        due = [:]
        for (topic, entry) in waiting.sorted(by: { $0.key < $1.key }) {
            await reconcile(topic, engine: entry.engine, awaitingAck: false)
        }
    }
}
