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
    private var scheduled: [String: Task<Void, Never>] = [:]
    private var generations: [String: Int] = [:]
    private var pendingEngines: [String: RelayEngine] = [:]

    init(lock: any SharedLocking, client: MQTTClient, logger: Logger, quietPeriod: Duration = .milliseconds(100)) {
        self.lock = lock
        self.client = client
        self.logger = logger
        self.quietPeriod = quietPeriod
    }

    /// Notes that `message` was published; a retained state topic is reconciled once quiet.
    nonisolated func published(_ message: MQTTMessage, engine: RelayEngine) {
        guard message.retain, RetainedState.kind(of: message.topic, settings: engine.settings) != nil else { return }
        Task { await self.schedule(message.topic, engine: engine) }
    }

    private func schedule(_ topic: String, engine: RelayEngine) {
        let generation = (generations[topic] ?? 0) + 1
        generations[topic] = generation
        scheduled[topic]?.cancel()
        pendingEngines[topic] = engine
        let quiet = quietPeriod
        scheduled[topic] = Task {
            try? await Task.sleep(for: quiet)
            guard !Task.isCancelled else { return }
            await self.reconcile(topic, engine: engine, generation: generation)
        }
    }

    private func reconcile(_ topic: String, engine: RelayEngine, generation: Int, awaitingAck: Bool = true) async {
        if generations[topic] == generation {
            generations[topic] = nil
            scheduled[topic] = nil
            pendingEngines[topic] = nil
        }
        let client = self.client
        do {
            try await lock.withSharedLock(topic) {
                guard let payload = try await RetainedState.current(topic, store: engine.store, settings: engine.settings) else { return }
                if awaitingAck {
                    // Bounded: at a stop the acknowledgement is no longer read, and the lock must not
                    // be held past it.
                    try await Self.within(.seconds(2)) {
                        try await client.publishAndWait(topic: topic, payload: payload, qos: .atLeastOnce, retain: true)
                    }
                } else {
                    try client.publish(topic: topic, payload: payload, qos: .atLeastOnce, retain: true)
                }
            }
        } catch {
            logger.warning("could not republish a retained state from the store", metadata: ["topic": "\(topic)", "error": "\(error)"])
        }
    }

    /// Runs `body`, throwing a ``TimeoutError`` if it takes longer than `limit` (and cancelling it).
    static func within(_ limit: Duration, _ body: @escaping @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await body()
                return true
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return false
            }
            let finished = try await group.next() ?? false
            group.cancelAll()
            if !finished { throw ReconcileTimeout(limit: limit) }
        }
    }

    /// At a stop, once receiving stopped: reconciles every topic still waiting for its quiet period
    /// now, without waiting for acknowledgements (they are no longer read; the publishes are
    /// written before the DISCONNECT, so the broker still takes them).
    func finish() async {
        let waiting = scheduled
        scheduled = [:]
        for (topic, task) in waiting {
            task.cancel()
            guard let engine = pendingEngines[topic] else { continue }
            await reconcile(topic, engine: engine, generation: generations[topic] ?? 0, awaitingAck: false)
        }
        pendingEngines = [:]
    }
}

/// The retained state topics a relay publishes from the store, and their payloads as the store
/// has them now.
enum RetainedState {
    enum Kind { case button(String), device(String), model(String) }

    /// What `topic` is the state of, nil for any other topic.
    static func kind(of topic: String, settings: RelaySettings) -> Kind? {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let buttons = settings.buttonPrefix.split(separator: "/", omittingEmptySubsequences: false).map(String.init) + ["buttons"]
        if levels.count == buttons.count + 2, Array(levels.prefix(buttons.count)) == buttons, levels.last == "state" {
            return .button(levels[buttons.count])
        }
        if levels.count == 3, levels[0] == "devices", levels[2] == "info" { return .device(levels[1]) }
        let models = settings.trellisPrefix.split(separator: "/", omittingEmptySubsequences: false).map(String.init) + ["models"]
        if levels.count == models.count + 2, Array(levels.prefix(models.count)) == models, levels.last == "info" {
            return .model(levels[models.count])
        }
        return nil
    }

    /// The payload `topic` should hold now: the state read from the store, `[]` (clearing the
    /// retained message) for an entity that is gone, nil when nothing should be published.
    static func current(_ topic: String, store: any TrellisStore, settings: RelaySettings) async throws -> [UInt8]? {
        switch kind(of: topic, settings: settings) {
        case let .button(id)?:
            guard let snapshot = try await store.button(id: id) else { return nil }
            return ButtonPayloads.state(ButtonState(id: snapshot.id, total: snapshot.total, history: snapshot.history))
        case let .device(id)?:
            return try await store.device(id: id).map(DevicePayloads.info) ?? []
        case let .model(id)?:
            return try await store.model(id: id).map(DevicePayloads.modelInfo) ?? []
        case nil:
            return nil
        }
    }
}

/// A reconcile's publish was not acknowledged in time.
struct ReconcileTimeout: Error, CustomStringConvertible {
    let limit: Duration
    var description: String { "the broker did not acknowledge the publish within \(limit)" }
}
