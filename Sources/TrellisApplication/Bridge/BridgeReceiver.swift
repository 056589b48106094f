import Foundation
import Logging
import ServiceLifecycle
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStore

/// The receiving side of one bridge: its `in` rules. A client of its own on the upstream broker
/// (a persistent session, so what arrives while Trellis is away waits there) subscribes to each
/// rule's topics; each message is published on the local broker under its local topic through the
/// relay's own connection, and acknowledged upstream only once the local broker has acknowledged it.
/// Nothing is kept in between: until the local acknowledgement, the upstream broker holds the
/// message and sends it again after a lost connection or a restart (at least once). Only its id
/// is kept, recorded in the store (written behind) once the local broker has the message, so that
/// a copy (sent again by either broker or by the sending Trellis) is dropped also after a restart,
/// or in another relay's turn. A copy passes when Trellis is killed before the record is committed,
/// when a stop outlasts the wait for the local answer to a message sent, when the ids cannot be
/// read as a turn starts, and in a share group when a turn starts before the last turn's records
/// are committed: at least once, as MQTT's QoS 1 is.
///
/// The relay subscribes with No Local, so what it carries in never reaches its own routes: a message
/// brought in cannot go back out by an `out` rule, nor be taken by Trellis for a request.
package final class BridgeReceiver: Service, Sendable {
    let bridge: BridgeSettings
    /// The upstream link, whose client is this relay's only during its turns (always, alone on its store).
    let link: UpstreamLink
    let local: MQTTClient
    let logger: Logger
    let counters: BridgeCounters
    /// Where the ids of what was carried in are kept.
    let store: any BridgeCarriedStore
    /// The relay's client id or its share group's name, which the origin of its own bridges'
    /// messages starts with.
    let owner: String
    /// Local publishes failing now (tried each second while the local broker is away).
    private let failures: BridgeFailureLog

    /// - Parameters:
    ///   - owner: the relay's client id, or its share group's name (whose relays take turns).
    ///   - group: the share group, whose store's lease decides which relay receives; nil alone.
    package init(
        bridge: BridgeSettings, local: MQTTClient, store: any TrellisStore, owner: String, group: String?,
        maximumPacketSize: Int?, logger: Logger
    ) throws {
        self.bridge = bridge
        self.local = local
        self.logger = logger
        self.owner = owner
        self.store = store
        counters = BridgeCounters(bridge: bridge.name)
        failures = BridgeFailureLog(bridge: bridge.name, logger: logger)
        link = try UpstreamLink(turns: BridgeTurns(bridge: bridge.name, direction: "in", group: group, store: store)) {
            try .upstream(
                of: bridge, owner: owner, direction: .in, maxUnhandledMessages: bridge.window,
                maximumPacketSize: maximumPacketSize, logger: logger)
        }
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            await self.link.run(logger: self.logger) { client in await self.receive(through: client) }
        }
    }

    /// Subscribes `client` by the `in` rules and carries what arrives, until cancelled.
    private func receive(through client: MQTTClient) async {
        for rule in bridge.inRules {
            // Kept by the client across reconnects; the first is sent once connected.
            do {
                try await client.subscribe(rule.filter.text, qos: rule.qos == 0 ? .atMostOnce : .atLeastOnce)
            } catch {
                logger.error(
                    "could not subscribe upstream: \(error)",
                    metadata: ["bridge": "\(bridge.name)", "topic": "\(rule.filter.text)"])
                return
            }
        }
        logger.info(
            "carrying messages in from the upstream broker",
            metadata: ["bridge": "\(bridge.name)", "upstream": "\(bridge.url)"])
        var seen = await remembered()
        var recorded = 0
        for await message in client.messages {
            let arrival = seen.arrival(of: message.properties.userProperties, relay: owner)
            if arrival == .carry {
                // Stopping before the local broker has it: left unacknowledged, so the upstream
                // broker sends it again to the next session.
                guard await carry(message) else { break }
                if let id = BridgeMessageID(properties: message.properties.userProperties) {
                    recorded += 1
                    await record(id, forgetting: recorded % Self.forgetEvery == 0)
                }
            } else {
                counters.dropped(arrival)
                logger.debug(
                    "dropped a message from the upstream broker",
                    metadata: ["bridge": "\(bridge.name)", "topic": "\(message.topic)", "why": "\(arrival)"])
            }
            client.messageHandled()
        }
    }

    /// The ids this bridge carried in lately, as the store has them; none (with a warning) while the
    /// store cannot be read, when a copy may pass once.
    private func remembered() async -> SeenBridgeIDs {
        do {
            let ids = try await store.carriedIn(bridge: bridge.name, limit: SeenBridgeIDs.defaultCapacity)
            return SeenBridgeIDs(remembering: ids)
        } catch {
            logger.warning(
                "could not read the ids carried in before; a copy of one may pass once",
                metadata: ["bridge": "\(bridge.name)", "error": "\(error)"])
            return SeenBridgeIDs()
        }
    }

    /// How many records go between two that also forget the ids past the newest
    /// ``SeenBridgeIDs/defaultCapacity`` (which reads that many rows).
    static let forgetEvery = 256

    /// Records `id` as carried in, written behind and not waited for: when the store cannot keep
    /// it, the message is acknowledged all the same (it is on the local broker), and only a copy
    /// after a restart could pass.
    private func record(_ id: BridgeMessageID, forgetting: Bool) async {
        do {
            try await store.recordCarriedIn(
                bridge: bridge.name, id: id, forgettingPast: forgetting ? SeenBridgeIDs.defaultCapacity : nil)
        } catch {
            logger.debug(
                "could not record the id of a message carried in",
                metadata: ["bridge": "\(bridge.name)", "id": "\(id.text)", "error": "\(error)"])
        }
    }

    /// Notes a message the local broker or the client refused: counted, and logged at most a line a minute.
    private func noteRefusal(of topic: String, _ error: MQTTError) {
        guard let unlogged = counters.refusedLocally(at: Date()) else { return }
        logger.warning(
            "dropped a message from the upstream broker that the local broker or the client refused: \(error)",
            metadata: ["bridge": "\(bridge.name)", "topic": "\(topic)", "refused_since_last_line": "\(unlogged)"])
    }

    /// How long a stop still waits for the local broker's answer to a message sent: the local
    /// broker may have the message already (its readers may have it), and only with the answer is
    /// it recorded and acknowledged upstream, not carried again after the restart.
    static let graceAfterStop: Duration = .seconds(5)

    /// Publishes `message` locally by the first `in` rule that carries its topic and waits for the
    /// local broker's acknowledgement, trying again each second while the local broker is away. A
    /// message the local broker or the client refuses (``TrellisMQTT/MQTTError/refusesTheMessage``)
    /// would be refused however often it went, and the messages behind it would wait for good: it is
    /// dropped, counted and logged, and acknowledged upstream. False when the receiver stopped
    /// first: the message is not to be acknowledged upstream.
    private func carry(_ message: MQTTMessage) async -> Bool {
        let crossings = bridge.inRules.lazy.compactMap { rule in rule.crossing(message.topic).map { (rule, $0) } }
        guard let (rule, topic) = crossings.first else {
            logger.debug(
                "no in rule carries this topic", metadata: ["bridge": "\(bridge.name)", "topic": "\(message.topic)"])
            return true
        }
        let qos: QoS = rule.qos == 0 ? .atMostOnce : .atLeastOnce
        while !Task.isCancelled {
            do {
                // Its id goes with it, for a reader that drops copies too.
                let sent = try local.publishForAcknowledgement(
                    MQTTMessage(
                        topic: topic, payload: message.payload, qos: qos, retain: rule.retain && message.retain,
                        properties: MQTTProperties(userProperties: message.properties.userProperties)))
                try await sent.acknowledged(outlastingCancellationBy: Self.graceAfterStop)
                failures.worked("publish a message carried in")
                counters.carried()
                return true
            } catch let error as MQTTError where error.refusesTheMessage {
                noteRefusal(of: topic, error)
                return true
            } catch {
                guard !Task.isCancelled else { break }
                failures.failed("publish a message carried in", error, metadata: ["topic": "\(topic)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
        return false
    }
}
