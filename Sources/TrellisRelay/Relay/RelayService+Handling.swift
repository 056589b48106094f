import Foundation
import TrellisCore
import TrellisMQTTTypes

/// The relay's message loop: handling, publishing answers, and acknowledging under the
/// write-behind rule.
extension RelayService {
    /// The most read requests handled at once (see ``handleMessages()``).
    static let readsInHand = 256

    /// A read request being handled beside others.
    struct InHand {
        /// When its handling started (``RelayService/now``).
        var started: UInt64
        var engine: RelayEngine
        var message: MQTTMessage
        var received: Date
        var handling: Task<RelayEngine.Output, Never>
    }

    /// Handles each message, then acknowledges it once the changes its handling queued behind
    /// are committed (the write-behind rule): a message whose changes are all committed (or which
    /// queued none) is acknowledged at once; otherwise the loop handles the rest of the burst the
    /// client read, then waits for one commit covering them all and acknowledges them together.
    /// While that commit fails and is retried, nothing is acknowledged and nothing more is read. If
    /// the store stops retrying (a shutdown while it cannot commit), the messages held stay
    /// unacknowledged and the broker sends them again.
    ///
    /// On a store whose reads wait on a server (``StoreLifecycle/readsWaitOnServer``), a run of
    /// queued messages that only read (``RelayEngine/onlyReads(_:)``) is handled at once, so their
    /// round trips overlap (a shared store sends their spam admissions in one call); their answers
    /// are published in the order the requests came. A read request that comes alone is handled
    /// like any other message: a task to overlap it with nothing would only add latency. So is
    /// every read on a store in this process, which has no wait to overlap.
    /// Any other message is handled alone: after every message before it is done and before any
    /// after it starts, so a change is seen by every message after it, as if all were handled one
    /// by one. So is the first message of a new session, whose handling may first forget the marks
    /// of the last one.
    ///
    /// On a store in this process, a message that comes while the loop waits is begun in the
    /// client's callback (``handleOnNetworkThread(_:)``); one not finished there reaches the loop
    /// carrying what is left of its handling, which the loop finishes (``RelayEngine/finish(_:of:)``).
    func handleMessages() async {
        let client = self.client
        let messages = client.messages
        var held = 0
        var inHand: [InHand] = []
        var connection: Int?
        // A message is begun in the client's callback while this loop waits, and finished here when
        // something of it waits; a store on a server answers nothing from memory, and its messages
        // are not offered.
        if !engine.store.readsWaitOnServer {
            client.setMessageCallback { [self] in handleOnNetworkThread($0) }
        }
        defer { client.setMessageCallback(nil) }
        // Cancellation is watched once for the whole loop (it ends the stream), not at every message.
        await messages.withCancellationWatched {
            for await entry in messages.carrying {
                let message = entry.message
                let engine = self.engine
                let overlapsReads = engine.store.readsWaitOnServer
                let newSession = message.delivery.map { $0.connection != connection } ?? false
                if let delivery = message.delivery { connection = delivery.connection }
                // Begun on the network thread already, with what is left of it carried along: nothing else takes it.
                let carried = entry.carried as? CarriedHandling
                let begun = carried?.handling
                // What a retained sweep's subscriptions bring, and its markers, are the sweep's, not the routes'.
                let swept = begun == nil && (sweepInbox.withLock { $0 }?.offer(message) ?? false)
                let own = swept || begun != nil ? nil : engine.ownTopics.kind(of: message.topic)
                // A read request alone (none in hand, none queued: one request at a time) is handled
                // below, without a task of its own to start and wait for.
                if overlapsReads, begun == nil, !swept, own == nil, !newSession,
                    !(inHand.isEmpty && !messages.hasQueued),
                    engine.onlyReads(message)
                {
                    let received = Date()
                    inHand.append(
                        InHand(
                            started: Self.now, engine: engine, message: message, received: received,
                            handling: Task(executorPreference: client.taskExecutor) {
                                await engine.handle(message, at: received)
                            }))
                    if messages.hasQueued, inHand.count < Self.readsInHand { continue }
                    guard let finished = await finish(&inHand) else { break }
                    held += finished
                } else {
                    if !inHand.isEmpty {
                        guard let finished = await finish(&inHand) else { break }
                        held += finished
                    }
                    // A message begun in the callback is timed, and counted, as its handling was begun.
                    let started = carried?.started ?? Self.now
                    let handler = begun?.engine ?? engine
                    if swept {
                        // Read by the sweep already: nothing to handle, only to acknowledge in turn.
                    } else if case let .peerStatus(peer) = own {
                        await notePeer(
                            peer, present: !message.payload.isEmpty, online: message.payload == Array("online".utf8))
                    } else if own == .watchRequest {
                        noteWatchRequest(message)
                    } else {
                        let received = begun?.received ?? Date()
                        let output =
                            if let begun {
                                await begun.engine.finish(begun, of: message)
                            } else {
                                await engine.handle(message, at: received)
                            }
                        guard output.handled else { break }
                        send(output, of: message, received: received, engine: handler)
                    }
                    if !swept { handler.counters.handled(nanoseconds: Self.now &- started) }
                    held += 1
                }
                if let position = engine.store.uncommittedPosition {
                    if messages.hasQueued { continue }
                    guard await engine.store.waitUntilCommitted(through: position) else { break }
                }
                for _ in 0..<held { client.messageHandled() }
                held = 0
            }
        }
        held += await finish(&inHand) ?? 0
        if held > 0 {
            let store = engine.store
            if store.uncommittedPosition == nil {
                for _ in 0..<held { client.messageHandled() }
                return
            }
            let status = await store.writeStatus()
            logger.error(
                "stopping with messages unacknowledged: their changes could not be committed; the broker sends them again",
                metadata: ["messages": "\(held)", "cause": "\(status.error ?? "unknown")"])
        }
    }

    /// Waits for the read requests in hand, in the order they came, and publishes their answers;
    /// returns how many there were, or nil when one was not handled (``RelayEngine/Output/handled``),
    /// which ends the loop with it and those after it unacknowledged.
    private func finish(_ inHand: inout [InHand]) async -> Int? {
        defer { inHand.removeAll(keepingCapacity: true) }
        var count = 0
        for entry in inHand {
            let output = await entry.handling.value
            guard output.handled else { return nil }
            send(output, of: entry.message, received: entry.received, engine: entry.engine)
            entry.engine.counters.handled(nanoseconds: Self.now &- entry.started)
            count += 1
        }
        return count
    }

    /// Publishes a message's answers (or hands them to the local client they are for), and starts
    /// the Home Assistant announcement its handling asked for, which goes out from a task of its
    /// own at the broker's pace (``announceToHomeAssistant()``). The message and its answers are then
    /// kept for `trellis trace`, and streamed while someone watches (``TrafficWatch``): after the
    /// answers, so that what the ring lets go is freed after they are queued.
    /// `received`: when the message was taken, the time its dead letters carry.
    func send(_ output: RelayEngine.Output, of message: MQTTMessage, received: Date, engine: RelayEngine) {
        if output.announcesDiscovery { announceToHomeAssistant() }
        // By index: a `for … in` would copy each whole reply.
        for index in output.publishes.indices
        where !localClients.deliver(output.publishes[index], buttonPrefix: engine.settings.buttonPrefix) {
            do {
                try outlet.publish(output.publishes[index])
                reconciler?.published(output.publishes[index], engine: engine)
            } catch {
                logger.error(
                    "could not publish a reply",
                    metadata: ["topic": "\(output.publishes[index].topic)", "error": "\(error)"])
            }
        }
        if let seq = engine.watch.saw(message, publishes: output.publishes, at: received) {
            let event = engine.describer.describe(message, publishes: output.publishes, at: received, seq: seq)
            do {
                try outlet.publish(
                    MQTTMessage(
                        topic: engine.settings.watchEventsTopic, payload: event.json(),
                        qos: .atMostOnce))
            } catch {
                logger.debug("could not publish a watch event", metadata: ["error": "\(error)"])
            }
        }
    }
}
