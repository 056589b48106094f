import Foundation
import Logging
import Metrics
import Synchronization
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// Clears the retained topics that describe nothing any more (``RetainedSweepPlan``): discovery
/// configs under an earlier prefix or of deleted things, and the info or state of deleted devices,
/// models and plants.
///
/// It reads the retained messages on the relay's own connection: a second connection of the same
/// account would take the relay's session over on brokers that use the user name as the client id
/// (the secure profiles do). For the time of the sweep the relay subscribes to the plan's filters
/// (plainly: neither shared nor no-local, so the retained messages come, its own included); the
/// message loop hands what they bring to the ``SweepInbox`` instead of the routes. A marker the
/// relay then publishes to itself arrives after the last retained message, so the sweep knows it
/// has read them all without waiting on a timer; after unsubscribing, a second marker tells when
/// the last message of those subscriptions is in (see ``SweepInbox``).
///
/// The store is read before the retained messages, to keep only the candidates, and again after
/// them: whatever was retained then and is not in the store once read was deleted (a thing another
/// relay of the share group created meanwhile is in both). Each cleared topic is logged and counted
/// in `trellis_retained_swept_total{kind}`.
struct RetainedSweep: Sendable {
    let plan: RetainedSweepPlan
    let engine: RelayEngine
    let logger: Logger
    /// How long reading the retained messages may take before the sweep gives up, clearing nothing.
    var readLimit: Duration = .seconds(60)

    /// What a sweep found and cleared.
    struct Outcome: Sendable, Equatable {
        var read: Int
        var cleared: [String]
    }

    /// Reads the plan's retained topics through `outlet` (the relay's client, whose message loop
    /// offers every message to the inbox in `slot` while one is there), and clears the stale ones.
    /// Errors (the broker refusing a subscription, the store failing) are thrown with nothing cleared.
    func run(on outlet: any MessageOutlet, inbox slot: borrowing Mutex<SweepInbox?>) async throws -> Outcome {
        // Judged first by what exists before the reading, so the inbox keeps only the candidates (none,
        // usually) instead of every retained topic; judged again by what exists after it, so a thing
        // created meanwhile (by another relay of the share group) is kept.
        let before = try await facts()
        let inbox = SweepInbox(
            plan: plan, marker: "\(plan.trellisPrefix)/sweep/\(UUID().uuidString)", isStale: before.isStale)
        slot.withLock { $0 = inbox }
        let reading: SweepInbox.Reading
        do {
            try await outlet.subscribe(MQTTSubscription(inbox.marker, qos: .atLeastOnce))
            for filter in plan.filters { try await outlet.subscribe(MQTTSubscription(filter, qos: .atLeastOnce)) }
            try outlet.publish(MQTTMessage(topic: inbox.marker, payload: [], qos: .atLeastOnce))
            reading = try await TimeLimit.run(within: readLimit) { try await inbox.read() }
        } catch {
            await unsubscribe(outlet, inbox: inbox, slot: slot)
            throw error
        }
        await unsubscribe(outlet, inbox: inbox, slot: slot)

        let after = reading.candidates.isEmpty ? before : try await facts()
        var cleared: [String] = []
        for (topic, subject) in reading.candidates.sorted(by: { $0.key < $1.key }) where after.isStale(subject) {
            try outlet.publish(MQTTMessage(topic: topic, payload: [], qos: .atLeastOnce, retain: true))
            Counter(label: "trellis_retained_swept_total", dimensions: [("kind", subject.kind)]).increment()
            logger.info("cleared a stale retained topic", metadata: ["topic": "\(topic)", "kind": "\(subject.kind)"])
            cleared.append(topic)
        }
        if let last = cleared.last {
            // Acknowledged in order: once the last clear is taken, all of them are.
            try await outlet.publishAndWait(MQTTMessage(topic: last, payload: [], qos: .atLeastOnce, retain: true))
        }
        return Outcome(read: reading.count, cleared: cleared)
    }

    /// Unsubscribes the sweep's filters, then sends the second marker and waits for it: once it is
    /// in, nothing more comes under those filters, and the loop routes every message again. If it
    /// does not come in time, the inbox stays and keeps taking the sweep's messages until it does.
    private func unsubscribe(_ outlet: any MessageOutlet, inbox: SweepInbox, slot: borrowing Mutex<SweepInbox?>) async {
        for filter in plan.filters { try? outlet.unsubscribe(filter) }
        do {
            try outlet.publish(MQTTMessage(topic: inbox.marker, payload: [], qos: .atLeastOnce))
            try await TimeLimit.run(within: readLimit) { try await inbox.drained() }
        } catch {
            logger.warning("the retained sweep's subscriptions did not drain in time", metadata: ["error": "\(error)"])
            return
        }
        try? outlet.unsubscribe(inbox.marker)
        slot.withLock { current in
            if current === inbox { current = nil }
        }
    }

    /// What exists now, read from the store, so that a thing another relay of the share group
    /// created counts as well as this relay's (for discovery, also each kind's entities).
    private func facts() async throws -> RetainedSweepFacts {
        let store = engine.store
        let discovery = engine.homeAssistant != nil
        return RetainedSweepFacts(
            buttonIDs: discovery ? Set(try await store.buttonIDs()) : [],
            entities: discovery ? HomeAssistantService.entities() : [:],
            deviceIDs: Set(try await store.devices(modelID: nil, powerstate: nil).map(\.id)),
            modelIDs: Set(try await store.models().map(\.id)),
            plantIDs: Set(try await store.plants().map(\.id)))
    }
}
