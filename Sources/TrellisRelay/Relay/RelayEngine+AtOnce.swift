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

    /// Handles a QoS 0 `message` without suspending, when its one route can answer it from what
    /// this process holds (``answerAtOnce(_:at:)``); nil for a message with a delivery to mark,
    /// which ``handle(_:at:)`` admits to the handled deliveries first. The client's callback uses it.
    public func handleAtOnce(_ message: MQTTMessage, at time: Date) -> AtOnce? {
        guard message.delivery == nil else { return nil }
        return answerAtOnce(message, at: time)
    }

    /// Handles `message` without suspending, when its one route can answer it from what this
    /// process holds (``Route/answerAtOnce``): a request answered from the store's memory, the
    /// plant tracker's repeated `REQ_plantSensorData`, pays for no async frame, task-local binding
    /// or executor check between the message and its answer. Nil, with nothing changed, when it
    /// cannot: the message then goes to ``dispatch(_:at:)``.
    ///
    /// Only on a store that does not track what each message observed
    /// (``StoreLifecycle/readsObservedVersions``): the versions a shared store checks are bound to
    /// a message's handling as a task-local value. A message with a delivery (QoS 1 or 2) must have
    /// been admitted to the handled deliveries (``handle(_:at:)``); its mark is not bound here, and
    /// need not be: an answer at once writes nothing to the store, and the dead letters it leaves
    /// are stored by ``conclude(_:of:at:)`` with the mark bound.
    func answerAtOnce(_ message: MQTTMessage, at time: Date) -> AtOnce? {
        guard !store.readsObservedVersions else { return nil }
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
