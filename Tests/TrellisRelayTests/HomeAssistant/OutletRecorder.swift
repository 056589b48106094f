import Foundation
import Synchronization
import TrellisCore
import TrellisMQTTTypes
@testable import TrellisRelay
import TrellisTestSupport

/// What a relay service sends, kept in order, for its decisions tested on the engine: its
/// ``MessageOutlet`` in place of the MQTT client. It keeps what a broker keeps of Trellis's own
/// publishes that the service's decisions read back: the retained message of each topic (a retained
/// empty payload clears it, as MQTT says), handed over with the retained flag to a new subscription
/// whose filter matches; and a message published on a topic the service subscribed to without No
/// Local (the retained sweep's filters and markers) comes back to it. What comes back goes to the
/// service's retained sweep (``SweepInbox``), the only reader of those subscriptions; requests and
/// presses are handed to the service by the test (``RelayService/receive(_:_:)``).
///
/// Not a broker: no sessions, acknowledgements, QoS or access control; those are tested through
/// ``RelayHarness``. A subscription made in a cancelled task throws `CancellationError`, as the
/// client's wait for the broker's SUBACK does.
final class OutletRecorder: MessageOutlet {
    private struct State {
        var published: [MQTTMessage] = []
        var retained: [String: MQTTMessage] = [:]
        var subscriptions: [String: MQTTSubscription] = [:]
        var deliver: (@Sendable (MQTTMessage) -> Void)?
    }

    private let state = Mutex(State())

    /// Hands what comes back to the service to `deliver` (nil: to nobody).
    func deliver(to deliver: (@Sendable (MQTTMessage) -> Void)?) {
        state.withLock { $0.deliver = deliver }
    }

    func publish(_ message: MQTTMessage) throws {
        let (deliver, back) = state.withLock { state in
            state.published.append(message)
            if message.retain {
                state.retained[message.topic] = message.payload.isEmpty ? nil : message
            }
            let back = state.subscriptions.values.contains {
                !$0.noLocal && TopicFilter($0.filter).match(message.topic) != nil
            }
            return (state.deliver, back)
        }
        var live = message
        live.retain = false
        if back { deliver?(live) }
    }

    func publishAndWait(_ message: MQTTMessage) async throws {
        try publish(message)
    }

    func subscribe(_ subscription: MQTTSubscription) async throws {
        try Task.checkCancellation()
        let filter = TopicFilter(subscription.filter)
        let (deliver, retained) = state.withLock { state in
            state.subscriptions[subscription.filter] = subscription
            let retained = state.retained.values.filter { filter.match($0.topic) != nil }
            return (state.deliver, retained.sorted { $0.topic < $1.topic })
        }
        for message in retained { deliver?(message) }
    }

    func unsubscribe(_ filter: String) throws {
        _ = state.withLock { $0.subscriptions.removeValue(forKey: filter) }
    }

    /// Keeps `topics` retained with a non-empty payload, as an earlier run of Trellis left them.
    func retain(_ topics: [String]) {
        state.withLock { state in
            for topic in topics {
                state.retained[topic] = MQTTMessage(
                    topic: topic, payload: Array(#"{"left":"by an earlier run"}"#.utf8), qos: .atLeastOnce,
                    retain: true)
            }
        }
    }

    /// Everything published so far, oldest first.
    var messages: [MQTTMessage] { state.withLock { $0.published } }

    /// The topics whose retained message is there now (non-empty).
    var retainedTopics: Set<String> { state.withLock { Set($0.retained.keys) } }

    /// How many discovery configs are retained under `prefix` (one topic level) now.
    func configs(under prefix: String) -> Int {
        retainedTopics.filter { $0.hasPrefix(prefix + "/") && $0.hasSuffix("/config") }.count
    }
}

/// Runs `body` with the relay service on an engine over a fresh store of `kind`, its client never
/// connected and what it sends recorded by an ``OutletRecorder``, whose messages back go to the
/// service's retained sweep. The announcement under way is stopped at the end.
func withRecordedService(
    _ kind: StoreKind, settings: RelaySettings = RelaySettings(),
    _ body: (RelayService, OutletRecorder) async throws -> Void
) async throws {
    let outlet = OutletRecorder()
    try await withUnconnectedService(kind, settings: settings, outlet: outlet) { service in
        outlet.deliver { [weak service] message in _ = service?.sweepInbox.withLock { $0 }?.offer(message) }
        try await withTearDown(of: service, { await $0.stopAnnouncing() }) { try await body($0, outlet) }
    }
}

extension RelayService {
    /// What the service does at every connect: every config published again, then the sweep if due
    /// (at the first connect). Returns once all of it is done.
    func connectedAnnouncing() async {
        engine.discovery.forgetAll()
        announceToHomeAssistant()
        await announced()
    }

    /// Returns once the announcement under way, and the sweep after it, are done.
    func announced() async {
        await announcement.withLock { $0 }?.value
    }

    /// Handles `payload` on `topic` as the message loop handles a message from the broker, and
    /// sends the answers on through the outlet (an announcement it asks for is started).
    func receive(_ topic: String, _ payload: String = "") async {
        let engine = self.engine
        let message = MQTTMessage(topic: topic, payload: Array(payload.utf8), qos: .atLeastOnce)
        send(await engine.handle(message, at: Date()), of: message, received: Date(), engine: engine)
    }
}
