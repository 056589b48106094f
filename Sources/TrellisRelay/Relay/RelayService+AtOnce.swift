import Foundation
import TrellisMQTTTypes

extension RelayService {
    /// Handles a QoS 0 or QoS 1 message in the client's message callback, on the network thread,
    /// while the message loop waits with nothing queued (``MQTTClient/setImmediateHandler(_:written:)``): a
    /// request the engine answers at once (``RelayEngine/handleAtOnce(_:at:)``) is published without
    /// waking the loop, a task switch and a stream hand-over fewer per request, and a redelivery is
    /// dropped. True when it was handled; a QoS 1 message so handled wrote nothing to the store, so
    /// it may be acknowledged at once.
    ///
    /// False, to have the message queued for the loop as usual, when the engine cannot answer it at
    /// once, the retained sweep reading now may claim it, or it is a share group peer's status. What
    /// the engine did leave of it (the dead letters of an answer, a delivery already admitted to the
    /// handled deliveries, which must not be admitted again) is kept in ``concluding``, with the
    /// engine, for the loop, which finishes it when the message reaches it: the message is the next
    /// the loop takes, since it waits with nothing queued.
    ///
    /// This holds because the loop waits for the next message only once every message before it is
    /// handled and acknowledged (``handleMessages()`` takes the next one without waiting while any is
    /// held or in hand), which is what ``MQTTClient/setImmediateHandler(_:written:)`` asks of its consumer.
    func handleImmediately(_ message: MQTTMessage) -> Bool {
        if let sweep = sweepInbox.withLock({ $0 }), sweep.claims(message.topic) { return false }
        let engine = self.engine
        // A share group peer's status is the loop's to note, not a route's.
        if engine.settings.shareGroup != nil, engine.settings.peer(ofStatusTopic: message.topic) != nil { return false }
        let started = Self.now
        let received = Date()
        switch engine.handleAtOnce(message, at: received) {
        case let .answered(output):
            send(output, engine: engine)
            engine.counters.handled(nanoseconds: Self.now &- started)
            // Kept until the answer is written. What was kept before is freed now only when the
            // client has not written since (the answers of a burst go out together).
            answeredAtOnce.withLock { $0 = AnsweredAtOnce(output: output, message: message) }
            return true
        case .toHandle(nil, _):
            // Nothing taken up: the loop handles it from the start.
            return false
        case let left:
            let kept = Concluding(left: left, received: received, engine: engine,
                                  topic: message.topic, delivery: message.delivery)
            concluding.withLock { $0 = kept }
            return false
        }
    }

    /// Frees the answer ``handleImmediately(_:)`` kept, once the client has written it.
    func releaseAnswered() {
        _ = answeredAtOnce.withLock { kept in
            defer { kept = nil }
            return kept
        }
    }

    /// What ``handleImmediately(_:)`` left for `message` to finish, taken; nil for a message it did
    /// not take up. What was kept is always for the next message the loop takes (see above); one
    /// kept for another message would be a broken invariant, which is logged and finishes nothing.
    func takeConcluding(of message: MQTTMessage) -> Concluding? {
        guard let kept = concluding.withLock({ kept in
            defer { kept = nil }
            return kept
        }) else { return nil }
        guard kept.delivery == message.delivery, kept.topic == message.topic else {
            // What was kept for the other message is dropped with it; this one is handled from the start.
            logger.error("a message taken up on the network thread was not the next the loop took",
                         metadata: ["topic": "\(message.topic)", "kept_for": "\(kept.topic)"])
            return nil
        }
        return kept
    }
}
