import Foundation
import TrellisCore
import TrellisMQTTTypes

extension RelayEngine {
    /// What ``RelayEngine/handleAtOnce(_:at:)`` did with a message it handled.
    public enum AtOnce: Sendable {
        /// Handled: what to publish.
        case answered(Output)
        /// Handled, with dead letters to store or Home Assistant configs to follow, which may wait
        /// on the store: ``RelayEngine/conclude(_:of:at:)`` finishes it.
        case toConclude(HandlerOutput)
    }

    /// Handles `message` without suspending, when its one route can answer it from what this
    /// process holds (``Route/answerAtOnce``): a request answered from the store's memory, the
    /// plant tracker's repeated `REQ_plantSensorData`, pays for no async frame, task-local binding
    /// or executor check between the message and its answer. Nil, with nothing changed, when it
    /// cannot: the message then goes to ``handleSuspending(_:at:)``.
    ///
    /// Only a message with no delivery to mark (QoS 0) qualifies, on a store that does not track
    /// what each message observed (``StoreLifecycle/readsObservedVersions``): a QoS 1 message's
    /// mark is bound to its handling as a task-local value (``HandledDelivery``), and so are the
    /// versions a shared store checks.
    public func handleAtOnce(_ message: MQTTMessage, at time: Date) -> AtOnce? {
        guard message.delivery == nil, !store.readsObservedVersions else { return nil }
        let matches = routes.routes(for: message.topic)
        guard matches.count == 1 else { return nil }
        let (route, captures) = matches[0]
        guard let answer = route.answerAtOnce, let output = answer(message, HandlerContext(captures: captures, now: time, engine: self))
        else { return nil }
        counters.routed(service: route.service, publishes: output.publishes)
        guard output.deadLetters.isEmpty, !output.publishes.contains(where: \.retain) else { return .toConclude(output) }
        return .answered(Output(publishes: output.publishes, announcesDiscovery: output.announcesDiscovery))
    }
}
