import Foundation
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// The local side of the bridges' store and forward: each `out` rule is a route, and a message it
/// takes is kept in the store under its upstream topic, written behind in the batch that marks its
/// delivery handled, so the local broker has it acknowledged only once that batch committed. The application's
/// forwarder of each bridge sends what is kept and deletes it once the upstream broker has it.
struct BridgeService {
    let bridges: [BridgeSettings]

    var routes: [Route] {
        bridges.flatMap { bridge in
            bridge.outRules.map { rule in
                Route(
                    rule.filter.text, qos: .atLeastOnce, service: "bridge",
                    handler: ClosureHandler { message, context in
                        await keep(message, for: bridge.name, by: rule, context: context)
                    })
            }
        }
    }

    /// Keeps `message` for `bridge` when `rule` carries its topic. While the store cannot commit, the
    /// batch is retried and the message stays unacknowledged (the write-behind rule); a store that
    /// refuses it at once (closing) leaves a dead letter.
    func keep(_ message: MQTTMessage, for bridge: String, by rule: BridgeRule, context: HandlerContext) async
        -> HandlerOutput
    {
        guard let topic = rule.crossing(message.topic) else { return HandlerOutput() }
        do {
            try await context.store.enqueueForward(
                bridge: bridge, rule: rule.filter.text, topic: topic, payload: message.payload, qos: rule.qos,
                retain: rule.retain && message.retain, at: context.now)
            return HandlerOutput()
        } catch {
            context.logger.error("could not keep a message for the bridge \(bridge): \(error)")
            return .reject(message, reason: "store_error", at: context.now)
        }
    }
}
