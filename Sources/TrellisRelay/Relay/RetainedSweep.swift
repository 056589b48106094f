import Foundation
import Logging
import Metrics
import TrellisCore
import TrellisMQTT
import TrellisStore

/// Clears the retained topics that describe nothing any more (``RetainedSweepPlan``): discovery
/// configs under an earlier prefix or of deleted things, and the info or state of deleted devices,
/// models and plants.
///
/// It reads the retained messages from a connection of its own (the relay's client holds shared,
/// no-local subscriptions, which are not handed retained messages the relay published itself),
/// under the relay's credentials with `-sweep` after its client id. The retained messages come
/// right after the subscriptions; a marker it then publishes to itself arrives after the last of
/// them, so it knows when it has read them all without waiting on a timer.
///
/// The store is read after the retained messages: whatever was retained then and is not in the
/// store once read was deleted (a thing another relay of the share group created meanwhile is in
/// both). Each cleared topic is logged and counted in `trellis_retained_swept_total{kind}`.
struct RetainedSweep: Sendable {
    let plan: RetainedSweepPlan
    let engine: RelayEngine
    let logger: Logger
    /// How long reading the retained messages may take before the sweep gives up, sweeping nothing.
    var readLimit: Duration = .seconds(60)

    /// What a sweep found and cleared.
    struct Outcome: Sendable, Equatable {
        var read: Int
        var cleared: [String]
    }

    /// Reads the retained topics of ``plan`` through a client configured like `configuration` and
    /// clears the stale ones. Errors (a refused connection, a store that cannot be read) are thrown
    /// with nothing cleared.
    func run(like configuration: MQTTConfiguration) async throws -> Outcome {
        var configuration = configuration
        configuration.clientID += "-sweep"
        configuration.will = nil
        configuration.cleanStart = true
        configuration.sessionExpiry = 0
        configuration.maxUnhandledMessages = nil
        let client = try MQTTClient(configuration: configuration, logger: logger)
        client.start()
        do {
            try await client.waitUntilConnected()
            let retained = try await read(client)
            let facts = try await self.facts()
            var cleared: [String] = []
            for (topic, subject) in retained.sorted(by: { $0.key < $1.key }) where facts.isStale(topic, subject) {
                try client.publish(topic: topic, payload: [], qos: .atLeastOnce, retain: true)
                Counter(label: "trellis_retained_swept_total", dimensions: [("kind", subject.kind)]).increment()
                logger.info("cleared a stale retained topic", metadata: ["topic": "\(topic)", "kind": "\(subject.kind)"])
                cleared.append(topic)
            }
            if let last = cleared.last {
                // Acknowledged in order: once the last clear is taken, all of them are.
                try await client.publishAndWait(topic: last, payload: [], qos: .atLeastOnce, retain: true)
            }
            await client.shutdown()
            return Outcome(read: retained.count, cleared: cleared)
        } catch {
            await client.shutdown()
            throw error
        }
    }

    /// The retained messages of the plan's filters that are Trellis's, by topic (an empty payload
    /// is no retained message: the broker sends none for a cleared topic).
    private func read(_ client: MQTTClient) async throws -> [String: RetainedSweepPlan.Subject] {
        let marker = "\(plan.trellisPrefix)/sweep/\(UUID().uuidString)"
        try await client.subscribe(marker, qos: .atLeastOnce)
        for filter in plan.filters { try await client.subscribe(filter, qos: .atLeastOnce) }
        try client.publish(topic: marker, payload: [], qos: .atLeastOnce, retain: false)
        let plan = self.plan
        return try await TimeLimit.run(within: readLimit) {
            var found: [String: RetainedSweepPlan.Subject] = [:]
            for await message in client.messages {
                if message.topic == marker { return found }
                guard message.retain, !message.payload.isEmpty, let subject = plan.subject(of: message.topic) else { continue }
                found[message.topic] = subject
            }
            throw CancellationError()
        }
    }

    /// What exists now, read from the store (and, for discovery, the configs it calls for).
    private func facts() async throws -> RetainedSweepFacts {
        let store = engine.store
        let plants = try await store.plants()
        var configTopics: Set<String> = []
        if let homeAssistant = engine.homeAssistant {
            configTopics = try await homeAssistant.configTopics(store: store, plants: plants)
        }
        return RetainedSweepFacts(configTopics: configTopics,
                                  deviceIDs: Set(try await store.devices(modelID: nil, powerstate: nil).map(\.id)),
                                  modelIDs: Set(try await store.models().map(\.id)),
                                  plantIDs: Set(plants.map(\.id)))
    }
}
