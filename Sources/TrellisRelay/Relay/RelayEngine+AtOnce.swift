import Foundation
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

extension RelayEngine {
    /// What ``RelayEngine/handleAtOnce(_:at:)`` did with a message; ``finish(_:of:at:)`` does the rest.
    public enum AtOnce: Sendable {
        /// Handled: what to publish (nothing, for a redelivery dropped).
        case answered(Output)
        /// Answered, with dead letters to store or Home Assistant configs to follow, which may wait
        /// on the store; stored with the delivery's `mark` bound, if it has one.
        case toConclude(HandlerOutput, mark: DeliveryMark?)
        /// Not answered at once: to be handled by the suspending handlers, with the delivery's
        /// `mark` bound if it has one, after forgetting the previous session's marks when asked.
        case toHandle(mark: DeliveryMark?, forgetStored: Bool)
    }

    /// Takes `message` as far as it goes without suspending. A QoS 1 or 2 message is first checked
    /// against the handled deliveries (once: a second check would take it for a redelivery), and a
    /// redelivery is dropped there. Then, when the message's one route can answer it from what this
    /// process holds (``Route/answerAtOnce``), it is answered: a request answered from the store's
    /// memory, the plant tracker's repeated `REQ_plantSensorData`, pays for no async frame,
    /// task-local binding or executor check between the message and its answer.
    ///
    /// A fresh delivery answered at once needs no mark bound: an answer at once writes nothing to
    /// the store for the mark to go with. The first message of a new session is never answered at
    /// once, as the previous session's marks are forgotten first, which waits on the store.
    public func handleAtOnce(_ message: MQTTMessage, at time: Date) -> AtOnce {
        var mark: DeliveryMark?
        if message.delivery != nil {
            let admission = admitted(message)
            guard case let .toHandle(fresh, forgetStored: false) = admission else { return admission }
            mark = fresh
        }
        return answerAtOnce(message, at: time, mark: mark) ?? .toHandle(mark: mark, forgetStored: false)
    }

    /// Checks `message` against the handled deliveries: a redelivery of one already handled is
    /// dropped (answered with nothing); any other message is to be handled, a fresh delivery with
    /// its mark. A message without a delivery (QoS 0, offline replay) has nothing to check.
    func admitted(_ message: MQTTMessage) -> AtOnce {
        switch deliveries.admit(message) {
        case nil:
            return .toHandle(mark: nil, forgetStored: false)
        case .redelivery?:
            counters.redelivered()
            logger.debug("dropped a redelivery of a message already handled",
                         metadata: ["topic": "\(message.topic)", "packet_id": "\(message.delivery?.packetID ?? 0)"])
            return .answered(Output())
        case let .fresh(mark, forgetStored)?:
            return .toHandle(mark: mark, forgetStored: forgetStored)
        }
    }

    /// Finishes what ``handleAtOnce(_:at:)`` left of `message`, received at `time`.
    public func finish(_ atOnce: AtOnce, of message: MQTTMessage, at time: Date) async -> Output {
        switch atOnce {
        case let .answered(output):
            return output
        case let .toConclude(output, nil):
            return await conclude(output, of: message, at: time)
        case let .toConclude(output, mark?):
            return await HandledDelivery.$current.withValue(mark) { await conclude(output, of: message, at: time) }
        case .toHandle(nil, _):
            return await dispatch(message, at: time)
        case let .toHandle(mark?, forgetStored):
            return await handleFresh(message, mark: mark, forgetStored: forgetStored, at: time)
        }
    }

    /// The answer of `message`'s one route given without suspending (``Route/answerAtOnce``), with
    /// the message counted, and what is left of it for ``finish(_:of:at:)`` with the delivery's
    /// `mark`; nil, with nothing changed, when it cannot be given.
    ///
    /// Only on a store that does not track what each message observed
    /// (``StoreLifecycle/readsObservedVersions``): the versions a shared store checks are bound to
    /// a message's handling as a task-local value.
    private func answerAtOnce(_ message: MQTTMessage, at time: Date, mark: DeliveryMark?) -> AtOnce? {
        guard !store.readsObservedVersions else { return nil }
        let matches = routes.routes(for: message.topic)
        guard matches.count == 1 else { return nil }
        let (route, captures) = matches[0]
        guard let answer = route.answerAtOnce, let output = answer(message, HandlerContext(captures: captures, now: time, engine: self))
        else { return nil }
        counters.routed(service: route.service, publishes: output.publishes)
        guard output.deadLetters.isEmpty, !output.publishes.contains(where: \.retain) else { return .toConclude(output, mark: mark) }
        return .answered(Output(publishes: output.publishes, announcesDiscovery: output.announcesDiscovery))
    }
}
