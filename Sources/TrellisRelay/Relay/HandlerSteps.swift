import Foundation
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// Where a handler's step leaves a message: handled, or waiting for one thing.
public enum Step: Sendable {
    /// Handled: what to publish and what to dead-letter.
    case done(HandlerOutput)
    /// Waits for the store's answer to `operation`, which the driver feeds to
    /// ``HandlerSteps/resume(_:message:context:answering:)``. Boxed, so that a step is no larger
    /// than an output, which most steps are.
    indirect case store(StoreOperation)
    /// Waits for work of the service's own that is not one store operation (a plant's Home
    /// Assistant state, the catalog's care alerts moved to a new name): the driver awaits
    /// ``HandlerSteps/work(_:context:)``.
    case work
}

/// A handler written as steps, in the sans-IO style: the message (and then each answer of the
/// store) goes in, and what comes out is either the handler's output or the one store operation it
/// waits for, as a value. Its steps call nothing that waits (only ``HandlerSteps/work(_:context:)``,
/// the service's own async work, which a step asks for as ``Step/work``); the relay's driver
/// (``RelayEngine/begin(_:at:)``, ``RelayEngine/finish(_:of:)``) asks the store and feeds the answer
/// back, on the network thread as far as the store answers from memory, in the message loop from
/// there. The steps' state is the handler's value itself, carried with the message between the two.
///
/// A step that asks the store takes an answer given now (``StoreOperations/answerNow(_:)``) of
/// `store`, when the driver passes one, and goes straight on to the next step with it: what one step
/// hands the next is kept in the steps' state only when the operation is awaited. Each function is
/// a step of one list that a reader follows in one file per service; the steps are tested as plain
/// values, without a broker, a store or a driver (no `store`: feed the message and the store's
/// answers, check the output or the next operation).
public protocol HandlerSteps: Sendable {
    /// The first step, from the message alone.
    mutating func start(_ message: MQTTMessage, context: HandlerContext, answering store: (any StoreOperations)?)
        -> Step
    /// The step after the store answered the operation the last step waited for (or failed to).
    mutating func resume(
        _ answer: Result<StoreAnswer, any Error>, message: MQTTMessage, context: HandlerContext,
        answering store: (any StoreOperations)?
    ) -> Step
    /// The step after the service's own work the last step waited for (``Step/work``).
    mutating func work(_ message: MQTTMessage, context: HandlerContext) async -> Step
}

extension HandlerSteps {
    /// Steps that never wait for work of their own.
    public mutating func work(_ message: MQTTMessage, context: HandlerContext) async -> Step {
        .done(.none)
    }
}

/// One message's handling under way, as a value: the routes it goes to, how far their handlers'
/// steps (``HandlerSteps``) have come, and what they asked for so far. ``RelayEngine/begin(_:at:)``
/// makes it and runs it as far as nothing waits; ``RelayEngine/finish(_:of:)`` runs the rest. The
/// live relay begins a message in the client's message callback, on the network thread, and what
/// is left travels with the message itself into the message loop, which finishes it: nothing is
/// kept aside to be matched with the message again.
public struct MessageHandling: Sendable {
    /// What the handling waits for next.
    enum Next: Sendable {
        /// The first message of a new session: the previous session's delivery marks are forgotten first.
        case forgetStoredDeliveries
        /// The handler of the route at ``MessageHandling/index`` starts (every route done: conclude).
        case route
        /// The current steps wait for the store's answer to this operation.
        case store(StoreOperation)
        /// The current steps wait for their service's own work.
        case work
        /// The current route's handler is an async one, awaited as a whole.
        case handler
        /// Every handler is done: the output's dead letters are stored and its discovery configs followed.
        case conclude
    }

    /// The engine that took the message (a reload meanwhile does not change it).
    let engine: RelayEngine
    /// When the message was received.
    let received: Date
    /// The delivery's mark, bound while the handling changes the store (``HandledDelivery``).
    let mark: DeliveryMark?
    let matches: [(route: Route, captures: [String])]
    var index = 0
    var steps: (any HandlerSteps)?
    var next: Next
    /// What the handlers done so far asked for.
    var output = HandlerOutput()

    init(
        engine: RelayEngine, received: Date, mark: DeliveryMark?, matches: [(route: Route, captures: [String])],
        next: Next
    ) {
        (self.engine, self.received, self.mark, self.matches, self.next) = (engine, received, mark, matches, next)
    }

    /// What the current route's handler sees besides the message.
    var context: HandlerContext {
        HandlerContext(captures: matches[index].captures, now: received, engine: engine)
    }

    /// Takes the current steps' `step`: their output, counted, or what they wait for.
    mutating func take(_ step: Step) {
        switch step {
        case let .done(result):
            finishRoute(result)
        case let .store(operation):
            next = .store(operation)
        case .work:
            next = .work
        }
    }

    /// Adds the current route's `result` and moves to the next route.
    mutating func finishRoute(_ result: HandlerOutput) {
        engine.counters.routed(service: matches[index].route.service, publishes: result.publishes)
        output.merge(result)
        steps = nil
        index += 1
        next = .route
    }

    /// Runs the handling as far as nothing waits: the routes' steps, which take the store's answers
    /// given from memory (``StoreOperations/answerNow(_:)``). Stops at the first wait, or once every
    /// handler is done (``Next/conclude``).
    mutating func advance(_ message: MQTTMessage) {
        // A store that reads what each message observed is asked within the message's binding: nil.
        let answering = engine.answering
        while true {
            switch next {
            case .route:
                guard index < matches.count else {
                    next = .conclude
                    return
                }
                guard case let .steps(route) = matches[index].route.handling else {
                    next = .handler
                    return
                }
                switch route(message, context, answering) {
                case let .done(result):
                    finishRoute(result)
                case let .waiting(step, waiting):
                    steps = waiting.steps
                    take(step)
                }
            case .store, .forgetStoredDeliveries, .work, .handler, .conclude:
                return
            }
        }
    }
}

/// A message's handling begun on the network thread, carried with the message into the message
/// loop (``MQTTMessageDisposition/passedOn(carrying:)`` takes an object).
final class CarriedHandling: Sendable {
    let handling: MessageHandling
    /// When the callback began it, on the relay's clock (`RelayService.now`): the message's handling
    /// time counts from there.
    let started: UInt64

    init(_ handling: MessageHandling, started: UInt64) {
        self.handling = handling
        self.started = started
    }
}
