import Foundation
import TrellisMQTTTypes

extension RelayService {
    /// Handles a QoS 0 message in the client's message callback, on the network thread, while the
    /// message loop waits with nothing queued (``MQTTClient/setImmediateHandler(_:)``): a request the
    /// engine answers at once (``RelayEngine/handleAtOnce(_:at:)``) is published without waking the
    /// loop, a task switch and a stream hand-over fewer per request. True when it was handled.
    ///
    /// False, to have the message queued for the loop as usual, when the engine cannot answer it at
    /// once or the retained sweep reading now may claim it. An answer that still has dead letters to
    /// store (a refusal, an unknown plant) is kept in ``concluding``, with the engine that made it, for
    /// the loop, which finishes it when the message reaches it: the message is the next the loop
    /// takes, since it waits with nothing queued.
    ///
    /// This holds because the loop waits for the next message only once every message before it is
    /// handled and acknowledged (``handleMessages()`` takes the next one without waiting while any is
    /// held or in hand), which is what ``MQTTClient/setImmediateHandler(_:)`` asks of its consumer.
    func handleImmediately(_ message: MQTTMessage) -> Bool {
        if let sweep = sweepInbox.withLock({ $0 }), sweep.claims(message.topic) { return false }
        let engine = self.engine
        let started = Self.now
        let received = Date()
        switch engine.handleAtOnce(message, at: received) {
        case nil:
            return false
        case let .toConclude(output)?:
            concluding.withLock { $0 = (output, received, engine) }
            return false
        case let .answered(output)?:
            send(output, engine: engine)
            engine.counters.handled(nanoseconds: Self.now &- started)
            return true
        }
    }

    /// What ``handleImmediately(_:)`` left for `message` to finish, taken; nil for a message it did
    /// not handle. Only a QoS 0 message may have been.
    func takeConcluding(of message: MQTTMessage) -> (output: HandlerOutput, received: Date, engine: RelayEngine)? {
        guard message.delivery == nil else { return nil }
        return concluding.withLock { kept in
            defer { kept = nil }
            return kept
        }
    }
}
