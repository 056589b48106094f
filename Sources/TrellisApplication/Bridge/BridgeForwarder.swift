import Foundation
import Logging
import ServiceLifecycle
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStore

/// The sending side of one bridge: the driver of its ``ForwardWindow``. It reads what the bridge's
/// `out` rules kept in the store, publishes it upstream in the store's order, at most the window's
/// size unacknowledged, and deletes each message once the upstream broker acknowledged it. The
/// upstream connection is a client of its own with a persistent session, so libmosquitto sends
/// again, in order, what was unacknowledged when the link dropped; a message the process did not
/// live to see acknowledged is still in the store and goes again from the next start (at least once).
package final class BridgeForwarder: Service, Sendable {
    let bridge: BridgeSettings
    let store: any TrellisStore
    /// The upstream link, whose client is this relay's only during its turns (always, alone on its store).
    let link: UpstreamLink
    let logger: Logger
    let counters: BridgeCounters
    /// The relay's client id or its share group's name, which the origin of the ids starts with.
    let owner: String
    /// How often the forwarder looks at the store whatever it was told: what another relay of a
    /// share group kept is found then, and the acknowledged are deleted. What this relay keeps, it
    /// is told of at each commit (``BridgeStore/observeForwardsKept(bridge:_:)``).
    let idlePoll: Duration
    /// How often the queue is held to its bounds (``BridgeSettings/maxBytes``, ``BridgeSettings/maxAge``).
    static let trimInterval: Duration = .seconds(1)
    /// The store operations failing now (tried again at each poll while the store is away).
    private let failures: BridgeFailureLog

    /// - Parameters:
    ///   - owner: the relay's client id, or its share group's name (whose relays take turns).
    ///   - group: the share group, whose store's lease decides which relay forwards; nil alone.
    ///   - maximumPacketSize: the largest packet the upstream broker may send this connection
    ///     (`broker.max_packet_bytes`). It subscribes to nothing, but a session kept under its client id
    ///     may hold subscriptions (an earlier configuration's, or anyone's who took the id).
    ///   - idlePoll: how often the forwarder looks at the whole store, whatever it was told of commits.
    package init(
        bridge: BridgeSettings, store: any TrellisStore, owner: String, group: String?, maximumPacketSize: Int?,
        logger: Logger, idlePoll: Duration = .milliseconds(100)
    ) throws {
        self.bridge = bridge
        self.idlePoll = idlePoll
        self.store = store
        self.logger = logger
        counters = BridgeCounters(bridge: bridge.name, rules: bridge.outRules.map(\.filter.text))
        failures = BridgeFailureLog(bridge: bridge.name, logger: logger)
        self.owner = owner
        link = try UpstreamLink(turns: BridgeTurns(bridge: bridge.name, direction: "out", group: group, store: store)) {
            try .upstream(
                of: bridge, owner: owner, direction: .out, maximumPacketSize: maximumPacketSize, logger: logger)
        }
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            guard let origin = await self.origin() else { return }
            await self.link.run(logger: self.logger) { client in
                self.logger.info(
                    "forwarding to the upstream broker",
                    metadata: ["bridge": "\(self.bridge.name)", "upstream": "\(self.bridge.url)"])
                await self.forward(through: client, origin: origin)
            }
        }
    }

    /// The origin of the ids this bridge's messages carry (``BridgeMessageID``), with the state's
    /// identity read from the store, tried again each second while it cannot be read (nothing can be
    /// forwarded then either); nil once cancelled.
    private func origin() async -> String? {
        var warned = false
        while !Task.isCancelled {
            do {
                let state = try await store.stateIdentity()
                return BridgeMessageID.origin(relay: owner, bridge: bridge.name, state: state)
            } catch {
                if !warned {
                    logger.warning(
                        "could not read the state's identity; forwarding waits for the store: \(error)",
                        metadata: ["bridge": "\(bridge.name)"])
                    warned = true
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
        return nil
    }

    /// Drops whatever the upstream broker sends the connection, for as long as the returned task
    /// runs, with a warning at its first. The connection subscribes to nothing, but its session is
    /// kept: a subscription left in it under its client id (an earlier configuration's, or anyone's
    /// who took the id) brings messages, which would otherwise pile up unread in the client's stream.
    private func dropStrays(of client: MQTTClient) -> Task<Void, Never> {
        Task { [logger, bridge] in
            var warned = false
            for await message in client.messages where !warned {
                warned = true
                logger.warning(
                    "the upstream broker sent the out connection a message on a subscription its session was left with; dropped, as is anything more it sends this connection",
                    metadata: ["bridge": "\(bridge.name)", "topic": "\(message.topic)"])
            }
        }
    }

    /// The window's events in, its actions carried out, until cancelled. What happens meanwhile
    /// gathers in a ``ForwarderInbox`` from other threads (the upstream broker's acknowledgements,
    /// the commits that kept messages, the look falling due every ``idlePoll``), which wakes the
    /// loop once for all of it and only when something asks for it: a task waiting for each
    /// message would cost a task switch per message (at a backlog's pace, most of the forwarder's
    /// time).
    private func forward(through client: MQTTClient, origin: String) async {
        var window = ForwardWindow(limit: bridge.window)
        var trimmed = ContinuousClock.now - Self.trimInterval
        // Wakes carry nothing (what happened is in the inbox): one waiting is enough.
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let inbox = ForwarderInbox { wake.yield() }
        var iterator = wakes.makeAsyncIterator()
        let observation = store.observeForwardsKept(bridge: bridge.name) { inbox.kept() }
        let clock = Task { [idlePoll] in
            while !Task.isCancelled {
                try? await Task.sleep(for: idlePoll)
                inbox.lookDue()
            }
        }
        let strays = dropStrays(of: client)
        var pending = window.connect()
        turn: while !Task.isCancelled {
            while !pending.isEmpty {
                switch pending.removeFirst() {
                case let .read(after, limit):
                    do {
                        let messages = try await store.forwards(bridge: bridge.name, after: after, limit: limit)
                        failures.worked("read the bridge's queue")
                        pending += window.read(messages, complete: messages.count < limit)
                    } catch {
                        window.readFailed()
                        failures.failed("read the bridge's queue", error)
                    }
                case let .publish(message, _):
                    switch await publish(message, through: client, origin: origin) {
                    case nil:
                        break turn
                    case let .failure(refusal)?:
                        noteRefusal(of: message.id, refusal)
                        pending += window.acknowledged(message.id)
                    case let .success(acknowledgement)?:
                        let id = message.id
                        acknowledgement.whenAcknowledged { error in
                            switch error {
                            case nil: inbox.add(.acknowledged(id))
                            // Only when the client stops: the message stays in the store, and the
                            // forwarder is woken to see its turn end.
                            case let error? where error.kind == .shutDown: wake.yield()
                            case let error?: inbox.add(.refused(id, error))
                            }
                        }
                    }
                case let .delete(ids):
                    await delete(ids, from: &window)
                }
            }
            counters.unacknowledged(window.inFlight.count)
            inbox.await(window.acknowledgementsAwaited)
            guard await iterator.next() != nil else { break }
            let taken = inbox.take()
            pending = taken.answers.flatMap { answer(window: &window, $0) }
            guard taken.lookDue else {
                // A live stream wakes the forwarder at each commit: it reads what was kept, and the
                // full look (deleting what was acknowledged) stays at the clock's pace.
                if taken.kept { pending += window.kept() }
                continue
            }
            pending += window.stored()
            if ContinuousClock.now - trimmed >= Self.trimInterval {
                trimmed = ContinuousClock.now
                // What was acknowledged leaves first, so that the trim counts none of it as dropped.
                for case let .delete(ids) in pending { await delete(ids, from: &window) }
                pending.removeAll { if case .delete = $0 { true } else { false } }
                await trim(sparing: window.heldIDs)
            }
        }
        observation.end()
        clock.cancel()
        strays.cancel()
        wake.finish()
        // Acknowledgements gathered still count: their messages leave the store now rather than
        // going again next turn.
        pending += inbox.take().answers.flatMap { answer(window: &window, $0) }
        // The turn ends: what was acknowledged leaves the store now instead of going again next turn,
        // in a task of its own, which the turn's cancellation does not reach.
        let acknowledged = (pending + window.stop()).flatMap { action -> [Int64] in
            if case let .delete(ids) = action { ids } else { [] }
        }
        if !acknowledged.isEmpty { _ = await Task { await self.delete(acknowledged) }.value }
    }

    /// An answer of the upstream broker into the window: a refused message is let go like an
    /// acknowledged one (``noteRefusal(of:_:)``).
    private func answer(window: inout ForwardWindow, _ answer: ForwarderInbox.Answer) -> [ForwardWindow.Action] {
        switch answer {
        case let .acknowledged(id): return window.acknowledged(id)
        case let .refused(id, error):
            noteRefusal(of: id, error)
            return window.acknowledged(id)
        }
    }

    /// Deletes what the upstream broker acknowledged, and tells `window` whether it was done.
    private func delete(_ ids: [Int64], from window: inout ForwardWindow) async {
        if await delete(ids) { window.deleted(ids) } else { window.deleteFailed(ids) }
    }

    /// Deletes what the upstream broker acknowledged. False when it failed (logged): the window
    /// tries again with its next batch, and at the turn's end the messages go again next turn (at
    /// least once).
    private func delete(_ ids: [Int64]) async -> Bool {
        do {
            try await store.deleteForwards(bridge: bridge.name, ids: ids)
            failures.worked("delete forwarded messages")
            counters.forwarded(ids.count)
            return true
        } catch {
            failures.failed("delete forwarded messages", error)
            return false
        }
    }

    /// Notes a message the upstream broker refused (not authorized, too large, over a quota) or the
    /// client could never send: it will not go however often it is sent, so the caller lets it leave
    /// the queue and the messages after it go on. Counted, and logged at most a line a minute.
    private func noteRefusal(of id: Int64, _ error: MQTTError) {
        guard let unlogged = counters.refused(at: Date()) else { return }
        logger.warning(
            "dropped a message the upstream broker or the client refused: \(error)",
            metadata: ["bridge": "\(bridge.name)", "id": "\(id)", "refused_since_last_line": "\(unlogged)"])
    }

    /// Holds the queue to its bounds, and says what they dropped (at most a line a minute); records
    /// the age of the oldest message left. The messages the window holds (`held`) are spared: they
    /// go upstream, so neither deleted nor counted as dropped.
    private func trim(sparing held: [Int64]) async {
        let now = Date()
        do {
            let trim = try await store.trimForwards(
                bridge: bridge.name, maxBytes: bridge.maxBytes, storedBefore: now.addingTimeInterval(-bridge.maxAge),
                sparing: held)
            failures.worked("hold the bridge's queue to its bounds")
            counters.oldest(trim.oldest, at: now)
            guard let dropped = counters.trimmed(trim, at: now) else { return }
            logger.warning(
                "dropped the oldest messages of the bridge's queue to hold it to its bounds",
                metadata: [
                    "bridge": "\(bridge.name)", "dropped_by_age": "\(dropped.total.byAge)",
                    "dropped_by_bytes": "\(dropped.total.byBytes)", "dropped_by_rule": "\(dropped.description)",
                    "max_age_s": "\(Int(bridge.maxAge))",
                    "max_bytes": "\(bridge.maxBytes)", "queued": "\(trim.messages)", "queued_bytes": "\(trim.bytes)"
                ])
        } catch {
            failures.failed("hold the bridge's queue to its bounds", error)
        }
    }

    /// Queues `message` upstream, trying again each second while the client refuses it for now (a
    /// QoS 0 message while the link is down); a message that can never go (too large, a topic the
    /// client refuses) comes back as a failure; nil once cancelled.
    private func publish(
        _ message: ForwardWindow.Message, through client: MQTTClient, origin: String
    ) async -> Result<MQTTClient.Acknowledgement, MQTTError>? {
        while !Task.isCancelled {
            do {
                return .success(
                    try client.publishForAcknowledgement(
                        MQTTMessage(
                            topic: message.topic, payload: message.payload,
                            qos: message.qos == 0 ? .atMostOnce : .atLeastOnce, retain: message.retain,
                            properties: MQTTProperties(userProperties: [
                                UserProperty(
                                    BridgeMessageID.property,
                                    BridgeMessageID(origin: origin, sequence: message.id).text)
                            ]))))
            } catch let error as MQTTError where error.refusesTheMessage {
                return .failure(error)
            } catch {
                logger.debug(
                    "the upstream client refused a message for now: \(error)", metadata: ["bridge": "\(bridge.name)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
        return nil
    }
}
