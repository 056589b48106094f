import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import TrellisMQTT
import TrellisStore

/// The running relay: subscribes to every route, feeds each message to the engine (on the
/// network thread: in the client's message callback as far as nothing waits, then in a task that
/// prefers the thread), publishes the answers, and keeps `trellis/status` true.
///
/// On graceful shutdown it stops reading, publishes `offline`, flushes the store and
/// disconnects cleanly (so the will is not needed).
public final class RelayService: Service, Sendable {
    public let client: MQTTClient
    /// Where the service's own messages and its later subscriptions go: the client, unless the
    /// service was made with another outlet (``MessageOutlet``).
    public let outlet: any MessageOutlet

    /// The time in nanoseconds, for how long a message's handling took (``BootClock``: cheaper than
    /// `ContinuousClock`, whose `Duration`s divide 128-bit numbers to give nanoseconds).
    static var now: UInt64 { BootClock.nanoseconds }

    /// Button-service clients that are not on MQTT (Socket.IO sessions); answers addressed to
    /// them are handed to them instead of the broker.
    public let localClients = LocalButtonClients()
    private let current: Mutex<RelayEngine>
    let logger: Logger
    /// Republishes retained states from the store after other relays of the share group may have
    /// published older ones; nil for a relay alone on its topics.
    let reconciler: RetainedStateReconciler?
    /// The Home Assistant announcement being published, if any (see ``announceToHomeAssistant()``).
    let announcement = Mutex<Task<Void, Never>?>(nil)
    /// The retained sweep still to run after the next announcement, with the discovery prefixes
    /// used before; nil once run (see ``sweepIfDue()``).
    let dueSweep = Mutex<[String]?>([])
    /// The retained sweep reading on this connection, if one is: the message loop hands it the
    /// messages of its subscriptions (see ``RetainedSweep``).
    let sweepInbox = Mutex<SweepInbox?>(nil)
    /// The other relays of the share group whose status topic last said `online`.
    private let onlinePeers = Mutex<Set<String>>([])

    /// Creates the service; `client` must have been configured with `RelayService.will(for:)`.
    /// `outlet`: where the service publishes and subscribes while it runs; the client when nil.
    public init(client: MQTTClient, engine: RelayEngine, logger: Logger, outlet: (any MessageOutlet)? = nil) {
        self.client = client
        self.outlet = outlet ?? client
        self.current = Mutex(engine)
        self.logger = logger
        if engine.settings.shareGroup != nil, let lock = engine.store as? any SharedLocking {
            self.reconciler = RetainedStateReconciler(lock: lock, client: client, logger: logger)
        } else {
            self.reconciler = nil
        }
    }

    /// Creates the service with every Trellis service's routes over `store`.
    public convenience init(client: MQTTClient, store: any TrellisStore, settings: RelaySettings, logger: Logger) {
        self.init(
            client: client, engine: Relay.engine(store: store, settings: settings, logger: logger), logger: logger)
    }

    /// The engine in use: routes, settings and counters.
    public var engine: RelayEngine { current.withLock { $0 } }

    /// The relays of the share group online as last heard on `trellis/status/+`, this one included;
    /// 1 for a relay without a share group (`trellis_share_group_relays`).
    public var shareGroupRelaysOnline: Int { 1 + onlinePeers.withLock { $0.count } }

    /// Switches to `settings` without dropping the connection or any state: new limits and
    /// names apply to the next message; filters that a prefix change removed are unsubscribed
    /// and new ones subscribed. Returns the filters removed and added.
    @discardableResult
    public func apply(_ settings: RelaySettings, keepingPeers: Bool = true) async throws -> (
        removed: [String], added: [String]
    ) {
        let old = engine
        var settings = settings
        // A configuration reload does not know the share group's relays; they stay as heard.
        if keepingPeers { settings.peerClientIDs = old.settings.peerClientIDs }
        let new = Relay.engine(
            store: old.store, settings: settings, logger: old.logger, counters: old.counters,
            deliveries: old.deliveries, discovery: old.discovery, backups: old.backups,
            limits: old.limits, watch: old.watch)
        let before = Set(old.routes.subscriptions.map(\.filter))
        let after = Set(new.routes.subscriptions.map(\.filter))
        for subscription in new.routes.subscriptions where !before.contains(subscription.filter) {
            try await outlet.subscribe(settings.brokerSubscription(subscription))
        }
        let own = (before: Set(old.settings.ownSubscriptions.map(\.filter)), after: settings.ownSubscriptions)
        for subscription in own.after where !own.before.contains(subscription.filter) {
            try await outlet.subscribe(subscription)
        }
        current.withLock { $0 = new }
        for filter in own.before.subtracting(own.after.map(\.filter)).sorted() { try outlet.unsubscribe(filter) }
        for filter in before.subtracting(after).sorted() {
            try outlet.unsubscribe(old.settings.brokerSubscription(MQTTSubscription(filter)).filter)
        }
        if old.settings.homeAssistant?.withStatusTopics([]) == settings.homeAssistant?.withStatusTopics([]),
            old.settings.homeAssistant != settings.homeAssistant
        {
            // Only the relays of the group changed: the same configs again, with every relay's status topic.
            new.discovery.forgetAll()
            announceToHomeAssistant()
        } else if old.settings.homeAssistant != settings.homeAssistant {
            // Off, or another prefix: the configs published so far go; under a new prefix they come back.
            // An announcement still under way stops first, so none of its configs follows the removals.
            await stopAnnouncing()
            publish(HomeAssistantService.withdrawAll(ledger: new.discovery), what: "Home Assistant discovery removals")
            if let earlier = old.settings.homeAssistant?.prefix {
                dueSweep.withLock { $0 = ($0 ?? []) + [earlier] }
            }
            announceToHomeAssistant()
        }
        return (before.subtracting(after).sorted(), after.subtracting(before).sorted())
    }

    /// The will that marks Trellis offline if it dies without a clean disconnect.
    public static func will(for settings: RelaySettings) -> MQTTWill {
        MQTTWill(topic: settings.statusTopic, payload: Array("offline".utf8), qos: .atLeastOnce, retain: true)
    }

    public func run() async throws {
        let engine = self.engine
        let restored = await Persistently.run("read the deliveries handled before this start", logger: logger) {
            try await engine.deliveries.restore(from: engine.store)
        }
        guard restored else { throw CancellationError() }
        for subscription in engine.routes.subscriptions {
            try await client.subscribe(engine.settings.brokerSubscription(subscription))
        }
        for subscription in engine.settings.ownSubscriptions { try await client.subscribe(subscription) }
        guardLeftoverSweep()
        client.start()
        try await withGracefulShutdownHandler {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await self.watchConnection() }
                try await self.relay()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            self.logger.info("stopping: no new messages are taken; finishing those in hand")
            self.client.stopReceiving()
            Task { await self.stopRetryingIfFailing(after: .seconds(4)) }
        }
        await stop()
    }

    /// At shutdown: when the store still cannot commit after `delay`, stops it retrying and waiting
    /// out its outage, so the messages waiting for it end unacknowledged (the broker sends them
    /// again) instead of holding the shutdown past the service manager's stop timeout.
    private func stopRetryingIfFailing(after delay: Duration) async {
        try? await Task.sleep(for: delay)
        let store = engine.store
        let status = await store.writeStatus()
        guard !status.writable else { return }
        logger.error(
            "stopping while the state store cannot commit: its queued changes are dropped and their messages left unacknowledged",
            metadata: ["unwritten_changes": "\(status.unwrittenChanges)", "cause": "\(status.error ?? "unknown")"])
        await store.stopRetrying()
    }

    /// Processes messages until graceful shutdown has stopped receiving and those in hand are done.
    ///
    /// The loop prefers the client's network thread: a message is read, handled and answered there
    /// with no thread hop, while store operations run on the store's own threads and resume here.
    /// A message that meets a store outage waits for the store (``OutageWaiting``).
    private func relay() async throws {
        await withTaskExecutorPreference(client.taskExecutor) {
            await OutageWaiting.$enabled.withValue(true) {
                await self.handleMessages()
            }
        }
    }

    /// Logs connection changes and republishes `online` after every (re)connect.
    private func watchConnection() async {
        var connectedBefore = false
        for await event in client.events.cancelOnGracefulShutdown() {
            switch event {
            case let .connected(sessionPresent):
                if connectedBefore { engine.counters.reconnected() }
                connectedBefore = true
                logger.info("connected to the broker", metadata: ["session_present": "\(sessionPresent)"])
                do {
                    try publishStatus("online")
                } catch {
                    logger.error("could not publish online status: \(error)")
                }
                // The broker may have lost retained messages since: publish every config again.
                engine.discovery.forgetAll()
                announceToHomeAssistant()
            case let .disconnected(reason):
                logger.warning("lost the broker connection; reconnecting", metadata: ["reason": "\(reason)"])
            case let .connectFailed(reason, retryIn):
                logger.warning("\(reason); retrying in \(String(format: "%.1f", retryIn)) s")
            }
        }
    }

    /// Begins a QoS 0 or QoS 1 message in the client's message callback, on the network thread,
    /// while this loop waits with nothing queued (``MQTTClient/setMessageCallback(_:)``): the
    /// engine runs its handling as far as nothing waits (``RelayEngine/begin(_:at:)``). A message so
    /// finished (a request answered from memory, a redelivery dropped) is consumed: its answer is
    /// published without waking the loop, a task switch and a stream hand-over fewer per request,
    /// and a QoS 1 one, which left nothing to commit, may be acknowledged at once.
    ///
    /// Any other message is passed on into the stream carrying what is left of its handling (a
    /// store operation to await, dead letters to store), which the loop finishes when it takes the
    /// message: the message is the next the loop takes, since it waits with nothing queued. A
    /// message the retained sweep reading now may claim, or one on the relay's own topics (a share
    /// group peer's status, a watch request), is passed on untouched: those are the loop's.
    func handleOnNetworkThread(_ message: MQTTMessage) -> MQTTMessageDisposition {
        // Asked under the lock, not of a copy taken out of it: a copy costs a retain and a release.
        if sweepInbox.withLock({ $0?.claims(message.topic) ?? false }) { return .passedOn(carrying: nil) }
        let engine = self.engine
        if engine.ownTopics.kind(of: message.topic) != nil { return .passedOn(carrying: nil) }
        let started = Self.now
        let received = Date()
        switch engine.begin(message, at: received) {
        case let .finished(output):
            send(output, of: message, received: received, engine: engine)
            engine.counters.handled(nanoseconds: Self.now &- started)
            // The message's topic and payload and its answers (up to the ring's eight) are freed when
            // the traffic ring lets them go, long after the answers are written.
            return .consumed
        case let .underway(handling):
            return .passedOn(carrying: CarriedHandling(handling, started: started))
        }
    }

    /// Adds a relay of the share group to those Home Assistant's availability lists (a status topic
    /// cleared to empty removes it), and counts it online while its status says `online`.
    func notePeer(_ peer: String, present: Bool, online: Bool) async {
        var settings = engine.settings
        guard peer != settings.clientID else { return }
        let relays = onlinePeers.withLock { peers in
            if online { peers.insert(peer) } else { peers.remove(peer) }
            return 1 + peers.count
        }
        engine.limits.shareRates(among: relays)
        guard settings.peerClientIDs.contains(peer) != present else { return }
        if present { settings.peerClientIDs.insert(peer) } else { settings.peerClientIDs.remove(peer) }
        logger.info(
            present ? "a relay of the share group is known" : "a relay of the share group is gone",
            metadata: ["relay": "\(peer)"])
        do {
            try await apply(settings, keepingPeers: false)
        } catch {
            logger.error("could not apply the share group's relays: \(error)")
        }
    }

    /// Publishes `offline`, flushes the store and disconnects. The `offline` publish is not awaited:
    /// receiving has stopped, so its acknowledgement would never be read, but it is written before
    /// the DISCONNECT on the same connection, so the broker takes it first.
    private func stop() async {
        await stopAnnouncing()
        await reconciler?.finish()
        do {
            try publishStatus("offline")
        } catch {
            logger.warning("could not publish offline status before stopping: \(error)")
        }
        // A store that cannot commit has had its chance while the messages waited; closing it
        // tries once more. Waiting here too would outlast the service manager's stop timeout.
        if await engine.store.writeStatus().writable {
            do {
                try await engine.store.flush()
            } catch {
                logger.error("could not flush the state store: \(error)")
            }
        }
        await client.shutdown()
        logger.info("relay stopped")
    }
}
