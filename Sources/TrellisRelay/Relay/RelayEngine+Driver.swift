import Foundation
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// The one driver of a message's handling: ``begin(_:at:)`` runs it as far as nothing waits,
/// ``finish(_:of:)`` runs the rest, awaiting each wait in turn. ``handle(_:at:)`` is the two in a row.
extension RelayEngine {
    /// What ``begin(_:at:)`` did with a message.
    public enum Progress: Sendable {
        /// Handled: what to publish (nothing, for a redelivery dropped). Nothing of it is left to
        /// store: a QoS 1 message so handled may be acknowledged at once.
        case finished(Output)
        /// Under way: what is left, for ``finish(_:of:)``.
        case underway(MessageHandling)
    }

    /// Takes `message`, received at `time`, as far as it goes without waiting. A QoS 1 or 2 message is
    /// first checked against the handled deliveries (once: a second check would take it for a
    /// redelivery), and a redelivery is dropped there. Then the handlers of its routes run, each
    /// step answered by the store from memory where it can (SQLite's spam ledger and read cache):
    /// the plant tracker's repeated `REQ_plantSensorData` is answered here, with no async frame,
    /// task-local binding or executor check between the message and its answer.
    ///
    /// It stops at the first wait: a store operation asked of the database, a handler of a service
    /// not written as steps, the forgetting of a previous session's marks, and the conclusion of an
    /// output with dead letters to store or Home Assistant configs to follow.
    public func begin(_ message: MQTTMessage, at time: Date) -> Progress {
        var mark: DeliveryMark?
        var forgetStored = false
        switch deliveries.admit(message) {
        case nil:
            break
        case .redelivery?:
            counters.redelivered()
            logger.debug(
                "dropped a redelivery of a message already handled",
                metadata: ["topic": "\(message.topic)", "packet_id": "\(message.delivery?.packetID ?? 0)"])
            return .finished(Output())
        case let .fresh(fresh, forget)?:
            mark = fresh
            forgetStored = forget
        }
        let matches = routes.routes(for: message.topic)
        var handling: MessageHandling
        if !forgetStored, matches.count == 1, case let .steps(route) = matches[0].route.handling {
            // The common case, one route's steps, taken first: the handling's bookkeeping is made
            // only when they wait or leave something to conclude.
            let begun = route(
                message, HandlerContext(captures: matches[0].captures, now: time, engine: self), answering)
            switch consume begun {
            case let .done(result):
                if let output = Self.finished(result) {
                    counters.routed(service: matches[0].route.service, publishes: result.publishes)
                    return .finished(output)
                }
                handling = MessageHandling(engine: self, received: time, mark: mark, matches: matches, next: .route)
                handling.finishRoute(result)
            case let .waiting(step, steps):
                handling = MessageHandling(engine: self, received: time, mark: mark, matches: matches, next: .route)
                handling.steps = steps.steps
                handling.take(step)
            }
        } else {
            handling = MessageHandling(
                engine: self, received: time, mark: mark, matches: matches,
                next: forgetStored ? .forgetStoredDeliveries : .route)
            if matches.isEmpty {
                // With no route the handling goes on to conclude, after forgetting the marks when asked.
                counters.received(service: "unknown")
                handling.output = .reject(message, reason: "unknown_topic", at: time)
            }
        }
        handling.advance(message)
        if case .conclude = handling.next, let output = Self.finished(handling.output) { return .finished(output) }
        return .underway(handling)
    }

    /// What to publish for `output` when nothing of it is left to conclude: no dead letter to
    /// store and no retained message to reconcile.
    private static func finished(_ output: HandlerOutput) -> Output? {
        guard output.deadLetters.isEmpty, !output.publishes.contains(where: \.retain) else { return nil }
        return Output(publishes: output.publishes, announcesDiscovery: output.announcesDiscovery)
    }

    /// Finishes what ``begin(_:at:)`` left of `message`: forgets the previous session's marks when
    /// asked, then, with the delivery's mark bound (so the store commits it with each change the
    /// message causes) and a fresh ``ObservedVersions`` when the store reads them, runs every step
    /// left, awaiting each store operation and each handler not written as steps, and concludes.
    public func finish(_ handling: MessageHandling, of message: MQTTMessage) async -> Output {
        var handling = handling
        if case .forgetStoredDeliveries = handling.next {
            // Not skipped on failure: a stale mark could drop a new message as a redelivery.
            let store = self.store
            _ = await Persistently.run("forget the deliveries of the previous session", logger: logger) {
                try await store.forgetDeliveries()
            }
            handling.next = .route
        }
        let ready = handling
        guard let mark = ready.mark else { return await observing { await run(ready, of: message) } }
        return await HandledDelivery.$current.withValue(mark) {
            await observing { await run(ready, of: message) }
        }
    }

    /// Hands `message` to the handler of every matching route and returns what to publish, and
    /// whether the whole Home Assistant announcement is to follow.
    public func handle(_ message: MQTTMessage, at time: Date) async -> Output {
        switch begin(message, at: time) {
        case let .finished(output): output
        case let .underway(handling): await finish(handling, of: message)
        }
    }

    /// `body` with a fresh ``ObservedVersions`` bound when the store reads it
    /// (``StoreLifecycle/readsObservedVersions``): what one message's handling saw of a shared store
    /// says nothing about the next message's.
    private func observing(_ body: () async -> Output) async -> Output {
        guard store.readsObservedVersions else { return await body() }
        return await ObservedVersions.$current.withValue(ObservedVersions()) { await body() }
    }

    /// Runs `handling` to its end, awaiting each wait.
    private func run(_ handling: MessageHandling, of message: MQTTMessage) async -> Output {
        var handling = handling
        while true {
            handling.advance(message)
            switch handling.next {
            case let .store(operation):
                let answer: Result<StoreAnswer, any Error>
                do {
                    answer = .success(try await store.answer(operation))
                } catch {
                    answer = .failure(error)
                }
                guard var steps = handling.steps.take() else { return await concludeBroken(handling, of: message) }
                let step = steps.resume(
                    answer, message: message, context: handling.context,
                    answering: answering)
                handling.steps = steps
                handling.take(step)
            case .work:
                guard var steps = handling.steps.take() else { return await concludeBroken(handling, of: message) }
                let step = await steps.work(message, context: handling.context)
                handling.steps = steps
                handling.take(step)
            case .handler:
                guard case let .handler(body) = handling.matches[handling.index].route.handling else {
                    return await concludeBroken(handling, of: message)
                }
                handling.finishRoute(await body(message, handling.context))
            case .conclude:
                return await conclude(handling.output, of: message, at: handling.received)
            case .route, .forgetStoredDeliveries:
                // `advance` runs the routes; the marks were forgotten before.
                handling.next = .route
            }
        }
    }

    /// What the handlers did before the handling lost its steps, concluded: never reached (a step
    /// that waits always leaves its steps), logged if it is.
    private func concludeBroken(_ handling: MessageHandling, of message: MQTTMessage) async -> Output {
        logger.error(
            "a message's handling waited without its steps; what was done is concluded",
            metadata: ["topic": "\(message.topic)"])
        return await conclude(handling.output, of: message, at: handling.received)
    }
}
