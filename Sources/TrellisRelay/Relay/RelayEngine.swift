import Foundation
import Logging
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// The relay's logic without the network: a message goes in with its time of receipt, and
/// what Trellis publishes in answer comes out. The live service and offline replay share it.
///
/// A class, so that taking the engine in use and handing it to each handler copies a reference.
public final class RelayEngine: Sendable {
    public let routes: RoutingTable
    public let store: any TrellisStore
    /// The store that handlers' steps ask for answers given now (``StoreOperations/answerNow(_:)``):
    /// `store`, unless it reads what each message observed (``StoreLifecycle/readsObservedVersions``),
    /// which is bound to a message's handling in the message loop. Worked out once, not per message.
    let answering: (any StoreOperations)?
    public let settings: RelaySettings
    /// The topics the relay reads for itself, made from `settings` once.
    public let ownTopics: OwnTopics
    public let logger: Logger
    /// Rejections, logged once per reason and interval.
    public let rejections: RejectionLog
    /// Running figures for `trellis/stats` and metrics.
    public let counters: RelayCounters
    /// Handled QoS 1 and 2 deliveries, to drop the broker's redeliveries of them.
    public let deliveries: DeliveryLedger
    /// The Home Assistant discovery configs published so far (kept across reloads).
    public let discovery: DiscoveryLedger
    /// Home Assistant discovery, nil while it is off.
    public let homeAssistant: HomeAssistantService?
    /// The backup being written and the last one asked for (kept across reloads).
    public let backups: BackupLedger
    /// The per-client rates and the refusals of every limit (kept across reloads).
    public let limits: ClientLimits
    /// Whose each dead letter is, for the per-client quota.
    let owners: DeadLetterOwner
    /// The recent traffic for `trellis trace`, and the stream for `trellis watch` (kept across reloads).
    public let watch: TrafficWatch
    /// What makes the events of ``watch``.
    public let describer: WatchDescriber

    public init(
        routes: RoutingTable, store: any TrellisStore, settings: RelaySettings, logger: Logger,
        counters: RelayCounters = RelayCounters(), deliveries: DeliveryLedger = DeliveryLedger(),
        discovery: DiscoveryLedger = DiscoveryLedger(), backups: BackupLedger = BackupLedger(),
        limits: ClientLimits = ClientLimits(), watch: TrafficWatch = TrafficWatch()
    ) {
        self.routes = routes
        self.store = store
        self.answering = store.readsObservedVersions ? nil : store
        self.settings = settings
        self.ownTopics = OwnTopics(settings)
        self.logger = logger
        self.rejections = RejectionLog(logger: logger)
        self.counters = counters
        self.deliveries = deliveries
        self.discovery = discovery
        self.backups = backups
        self.limits = limits
        self.watch = watch
        self.describer = settings.watchDescriber
        self.owners = DeadLetterOwner(
            plantPrefix: settings.plantPrefix, buttonPrefix: settings.buttonPrefix,
            trellisPrefix: settings.trellisPrefix)
        self.homeAssistant = HomeAssistantService(settings: settings)
    }

    /// What handling one message calls for.
    public struct Output: Sendable {
        /// Every message to publish, in order, dead-letter records included.
        public var publishes: [MQTTMessage] = []
        /// Whether the whole Home Assistant announcement is to follow (``HandlerOutput/announcesDiscovery``).
        public var announcesDiscovery = false
        /// False when the message was not handled: the store's outage outlasted the relay (it
        /// stopped waiting at shutdown), so nothing is published and the message must stay
        /// unacknowledged, for the broker to send again.
        public var handled = true
    }

    /// Hands `message` to the handler of every matching route and returns every message to
    /// publish, dead-letter records included, followed by the whole Home Assistant announcement
    /// when a handler asked for it. A topic no route knows becomes a dead letter itself. Offline
    /// replay and the tests use it; the live relay uses ``begin(_:at:)`` and ``finish(_:of:)``, to
    /// publish an announcement at the broker's pace.
    public func process(_ message: MQTTMessage, at time: Date) async -> [MQTTMessage] {
        let output = await handle(message, at: time)
        guard output.announcesDiscovery, let homeAssistant else { return output.publishes }
        return output.publishes + (await homeAssistant.announceAll(store: store, ledger: discovery, logger: logger))
    }

    /// Whether `message` may be handled beside the messages before it: some route takes it, and
    /// every route that does only reads for it (``Route/onlyReads``).
    public func onlyReads(_ message: MQTTMessage) -> Bool {
        let matches = routes.routes(for: message.topic)
        return !matches.isEmpty && matches.allSatisfy { $0.route.onlyReads?(message) ?? false }
    }

    /// What the handlers' `output` for `message` calls for: its publishes, with the Home Assistant
    /// discovery configs they call for, and its dead letters, each stored, counted and published.
    /// Nothing is handled when a store error's dead letter comes after the store stopped waiting
    /// (``Output/handled``).
    public func conclude(_ output: HandlerOutput, of message: MQTTMessage, at time: Date) async -> Output {
        if store.stoppedWaiting, output.deadLetters.contains(where: { $0.reason == "store_error" }) {
            logger.warning(
                "left unacknowledged: the state store was still away when the relay stopped waiting for it",
                metadata: ["topic": "\(message.topic)"])
            return Output(handled: false)
        }
        var publishes = output.publishes
        // Only retained publishes (a thing's state or info) call for discovery configs: a plant reply
        // goes out without the service's async call.
        if publishes.contains(where: \.retain) {
            publishes = await withDiscovery(publishes)
        }
        guard !output.deadLetters.isEmpty else {
            return Output(publishes: publishes, announcesDiscovery: output.announcesDiscovery)
        }
        for letter in output.deadLetters {
            counters.deadLetter(reason: letter.reason)
            rejections.record(reason: letter.reason, topic: letter.topic, at: time)
            do {
                try await store.recordDeadLetter(
                    reason: letter.reason, topic: letter.topic, payload: letter.payload, at: letter.receivedAt,
                    client: owners.owner(topic: letter.topic, payload: letter.payload),
                    quota: settings.deadLettersPerClient)
            } catch {
                logger.error("could not store a dead letter: \(error)")
            }
            publishes.append(
                MQTTMessage(topic: settings.deadLetterTopic, payload: letter.json(), qos: PublishQoS.delivered))
        }
        return Output(publishes: publishes, announcesDiscovery: output.announcesDiscovery)
    }

    /// `publishes` with the Home Assistant discovery configs they call for. Removals go first: Home
    /// Assistant must drop an entity before its state topic is cleared, or it tries to read the
    /// empty payload. New configs follow the states.
    ///
    /// Never inlined: the service is a struct holding every setting, and a caller that reads it
    /// copies it (a retain of each string) on every message, whether or not it calls for discovery.
    @inline(never)
    private func withDiscovery(_ publishes: [MQTTMessage]) async -> [MQTTMessage] {
        guard let homeAssistant else { return publishes }
        let discovered = await homeAssistant.follow(publishes, store: store, ledger: discovery)
        guard !discovered.isEmpty else { return publishes }
        return discovered.filter(\.payload.isEmpty) + publishes + discovered.filter { !$0.payload.isEmpty }
    }

    private static let plantMessageStart = Array("ID:".utf8)
    static let operationMarker = Array(";operation:".utf8)

    /// The UTF-8 bytes of the `operation:` tag of a plant tracker message (`RES_numPlants`,
    /// `ERR_hashLength`), if it is one. Asked of every reply, so it makes nothing: the bytes it looks
    /// for are made once, and the tag is a slice of the payload (the counters make a string of it only
    /// the first time they see it).
    static func operationTag(of payload: [UInt8]) -> ArraySlice<UInt8>? {
        guard payload.starts(with: plantMessageStart) else { return nil }
        let marker = operationMarker
        guard payload.count > marker.count else { return nil }
        // The tag ends the message: the last `;` that starts the marker, looked for from the end.
        let start = payload.withUnsafeBufferPointer { bytes in
            marker.withUnsafeBufferPointer { marker -> Int? in
                var index = bytes.count - marker.count
                while index >= 0 {
                    if bytes[index] == 0x3B,
                        UnsafeBufferPointer(rebasing: bytes[index..<(index + marker.count)]).sameBytes(as: marker)
                    {
                        return index + marker.count
                    }
                    index -= 1
                }
                return nil
            }
        }
        return start.map { payload[$0...] }
    }
}
