import Logging
import TrellisMQTT
import TrellisMQTTTypes

/// Where a running relay's own messages go, and the subscriptions it adds and drops while it runs:
/// its answers, the Home Assistant announcement and its removals, the retained sweep's reading and
/// clearing, its status. On a running relay that is its MQTT client (the conformance below); a test
/// may give the service another outlet that records what the service sends, so the service's
/// decisions are tested on the engine, without a broker.
///
/// The relay's message loop still reads through its client: what comes in is not the outlet's.
public protocol MessageOutlet: Sendable {
    /// Sends `message` without waiting for the broker; QoS 1 and 2 ones are kept until sent.
    func publish(_ message: MQTTMessage) throws
    /// Sends `message` and returns once the broker has taken it (acknowledged it, for QoS 1 and 2).
    func publishAndWait(_ message: MQTTMessage) async throws
    /// Adds a subscription; returns once the broker granted it (at once when not connected).
    func subscribe(_ subscription: MQTTSubscription) async throws
    /// Drops the subscription to `filter`.
    func unsubscribe(_ filter: String) throws
}

extension MQTTClient: MessageOutlet {
    public func publishAndWait(_ message: MQTTMessage) async throws {
        try await publishForAcknowledgement(message).acknowledged()
    }
}

extension RelayService {
    /// Publishes `status` (`online`, `offline`) retained on the relay's status topic.
    func publishStatus(_ status: String) throws {
        try outlet.publish(
            MQTTMessage(
                topic: engine.settings.statusTopic, payload: Array(status.utf8), qos: .atLeastOnce, retain: true))
    }

    /// Publishes each of `messages`, logging (as `what`) any that cannot be.
    func publish(_ messages: [MQTTMessage], what: String) {
        for message in messages {
            do {
                try outlet.publish(message)
            } catch {
                logger.error("could not publish \(what)", metadata: ["topic": "\(message.topic)", "error": "\(error)"])
            }
        }
    }
}
