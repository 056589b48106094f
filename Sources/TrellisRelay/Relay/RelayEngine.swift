import Foundation
import Logging
import TrellisCore
import TrellisMQTT
import TrellisStore

/// The relay's logic without the network: a message goes in with its time of receipt, and
/// what Trellis publishes in answer comes out. The live service and offline replay share it.
public struct RelayEngine: Sendable {
    public let routes: RoutingTable
    public let store: any TrellisStore
    public let settings: RelaySettings
    public let logger: Logger

    public init(routes: RoutingTable, store: any TrellisStore, settings: RelaySettings, logger: Logger) {
        self.routes = routes
        self.store = store
        self.settings = settings
        self.logger = logger
    }

    /// Routes `message` to its handler and returns every message to publish, dead-letter
    /// records included. A topic no route knows becomes a dead letter itself.
    public func process(_ message: MQTTMessage, at time: Date) async -> [MQTTMessage] {
        let output: HandlerOutput
        if let (route, captures) = routes.route(for: message.topic) {
            let context = HandlerContext(captures: captures, now: time, store: store, settings: settings, logger: logger)
            output = await route.handler.handle(message, context: context)
        } else {
            output = .reject(message, reason: "unknown_topic", at: time)
        }
        guard !output.deadLetters.isEmpty else { return output.publishes }
        var publishes = output.publishes
        for letter in output.deadLetters {
            logger.notice("rejected message", metadata: ["reason": "\(letter.reason)", "topic": "\(letter.topic)"])
            do {
                try await store.recordDeadLetter(reason: letter.reason, topic: letter.topic, payload: letter.payload, at: letter.receivedAt)
            } catch {
                logger.error("could not store a dead letter: \(error)")
            }
            publishes.append(MQTTMessage(topic: settings.deadLetterTopic, payload: letter.json(), qos: .atLeastOnce))
        }
        return publishes
    }
}
