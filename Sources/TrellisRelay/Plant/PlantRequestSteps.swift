import Foundation
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// A plant tracker request's whole path, as steps (``HandlerSteps``), in order:
///
/// 1. ``start(_:context:answering:)``: the payload is parsed and validated once (``PlantProtocol``);
///    a retained request, a sender not matching its per-client topic, and an empty sender in the
///    released app's dialect are refused; any other message with an accountable sender is counted
///    against the spam limit: ``StoreOperation/admitMessage(sender:at:limit:window:usingAllowance:)``.
/// 2. ``admitted(_:_:_:_:_:_:)``: a sender over the limit is kicked once, then muted; the host's own
///    messages and error tags are not answered; a rejected message gets its error reply; a request
///    is read in the reply topic's dialect and asks its store operation (``PlantService/operation(for:)``).
/// 3. ``answered(_:_:_:_:_:_:_:_:)``: the store's answer becomes the plant answer and the change it
///    made (``PlantService/outcome(of:answer:)``); in the original dialect a plant count grants the
///    refresh's index reads that follow it: ``StoreOperation/grantAllowance(sender:count:)``.
/// 4. ``rendered(_:_:_:_:_:_:_:)``: the replies in the reply topic's dialect (and, on a Response
///    Topic, the lossless one); a change waits for its follow-ups, the service's own work
///    (``PlantService/followUps(of:context:)``), in ``work(_:context:)``.
///
/// Each step that asks the store goes on at once with an answer given now (`store`, when the
/// driver passes one: SQLite's spam ledger and read cache), and otherwise keeps what the next step
/// needs (``State``) and returns the operation it waits for; ``resume(_:message:context:answering:)``
/// picks up from there with the answer. Every output ends with the dead letter of a refused
/// Response Topic, when the request named one.
struct PlantRequestSteps: HandlerSteps {
    /// What the next step needs while an operation is awaited. Indirect: boxed only while
    /// something is awaited, it is one word to keep and to drop for a request answered at once.
    indirect enum State: Sendable {
        case start
        /// Counted against the spam limit: waits for the verdict.
        case admitting(PlantParseResult, ReplyRoute)
        /// Read: waits for the answer to `read`'s store operation.
        case answering(PlantMessage, PlantOperation, PlantRequest, ReplyRoute)
        /// A plant count in the original dialect: waits for its index reads to be granted.
        case granting(PlantMessage, count: Int, ReplyRoute)
        /// Answered: waits for the follow-ups of `change`, added to `output`.
        case followingUp(HandlerOutput, PlantChange, ReplyRoute)
        case done
    }

    let service: PlantService
    /// The topic's client level on the per-client form.
    let client: String?
    private(set) var state = State.start

    init(service: PlantService, client: String?) {
        self.service = service
        self.client = client
    }

    var settings: RelaySettings { service.settings }

    mutating func start(_ message: MQTTMessage, context: HandlerContext, answering store: (any StoreOperations)?)
        -> Step
    {
        let parsed = PlantProtocol.parse(message.payload, hostName: settings.hostName)
        let reply = ReplyRoute(service: service, request: message, client: client)
        if let refusal = service.refusalBeforeCounting(
            message, claimedSender: parsed.claimedSender,
            isRequest: parsed.requestOperation != nil, reply: reply,
            client: client, now: context.now)
        {
            return done(refusal, message, reply, context)
        }
        guard let sender = parsed.accountableSender else {
            return admitted(nil, parsed, reply, message, context, store)
        }
        var indexRead = false
        if reply.dialect == .original, case let .request(request, .plantInfoOnStartup) = parsed {
            indexRead = PlantDialect.refreshIndex(request.payload) != nil
        }
        let operation = StoreOperation.admitMessage(
            sender: PlantService.spamKey(client: client, sender: sender), at: context.now,
            limit: settings.spamLimit, window: settings.spamWindow,
            usingAllowance: indexRead)
        if let answer = store?.answerNow(operation) {
            return admitted(consume answer, parsed, reply, message, context, store)
        }
        state = .admitting(parsed, reply)
        return .store(operation)
    }

    mutating func resume(
        _ answer: Result<StoreAnswer, any Error>, message: MQTTMessage, context: HandlerContext,
        answering store: (any StoreOperations)?
    ) -> Step {
        let current = state
        state = .done
        switch current {
        case let .admitting(parsed, reply):
            switch answer {
            case let .success(verdict):
                return admitted(verdict, parsed, reply, message, context, store)
            case let .failure(error):
                // A store that fails to count lets the message through.
                context.logger.error("state store failed while counting a message against the spam limit: \(error)")
                return admitted(nil, parsed, reply, message, context, store)
            }
        case let .answering(request, operation, read, reply):
            switch answer {
            case let .success(answer):
                return answered(answer, request, operation, read, reply, message, context, store)
            case let .failure(error):
                return failed(error, operation, reply, message, context)
            }
        case let .granting(request, count, reply):
            if case let .failure(error) = answer {
                context.logger.error("state store failed while granting a refresh's index reads: \(error)")
            }
            return rendered(.result(.count(count)), request, .numPlants, nil, reply, message, context)
        case .start, .followingUp, .done:
            return .done(.none)
        }
    }

    mutating func work(_ message: MQTTMessage, context: HandlerContext) async -> Step {
        let current = state
        state = .done
        guard case let .followingUp(output, change, reply) = current else { return .done(.none) }
        var followed = output
        followed.merge(await service.followUps(of: change, context: context))
        return done(followed, message, reply, context)
    }

    /// After the spam count (`verdict`; nil when the message is counted against no one, or the
    /// store failed to count it): what the verdict, then the parse result, calls for. Answers are
    /// passed as they are, failures dealt with in ``resume(_:message:context:answering:)``: a
    /// `Result` of them would be copied and destroyed through its generic value witnesses.
    @inline(__always)
    private mutating func admitted(
        _ verdict: consuming StoreAnswer?, _ parsed: consuming PlantParseResult, _ reply: ReplyRoute,
        _ message: MQTTMessage, _ context: HandlerContext, _ store: (any StoreOperations)?
    ) -> Step {
        if case let .verdict(given)? = verdict,
            let refusal = service.refusal(of: given, message: message, parsed: parsed, reply: reply, now: context.now)
        {
            return done(refusal, message, reply, context)
        }
        // Taken apart by a `switch` that consumes it: the request is moved out, not copied.
        switch consume parsed {
        case .ownMessage:
            return done(.none, message, reply, context)
        case let .incomingError(error):
            context.logger.info(
                "error tag received; not answered",
                metadata: ["operation": "\(error.operation)", "sender": "\(error.sender)"])
            return done(.none, message, reply, context)
        case let .rejected(rejection):
            var output = HandlerOutput()
            output.deadLetters.append(
                DeadLetter(
                    reason: rejection.tag?.rawValue ?? rejection.reason, topic: message.topic,
                    payload: message.payload, receivedAt: context.now))
            let hostName = settings.hostName
            output.publish(contentsOf: reply.messages { $0.error(for: rejection, hostName: hostName) })
            return done(output, message, reply, context)
        case let .request(request, operation):
            let read = reply.dialect.read(
                operation, payload: request.payload, maximumNameLength: settings.maxPlantNameLength)
            switch consume read {
            case let .failure(tag):
                return rendered(.error(tag), request, operation, nil, reply, message, context)
            case let .success(read):
                // Nothing to ask the store for a rename to the same name.
                if case let .renamePlant(rename) = read, rename.old == rename.new {
                    return answered(nil, request, operation, read, reply, message, context, store)
                }
                let storeOperation = service.operation(for: read)
                if let answer = store?.answerNow(storeOperation) {
                    return answered(consume answer, request, operation, read, reply, message, context, store)
                }
                state = .answering(request, operation, read, reply)
                return .store(storeOperation)
            }
        }
    }

    /// After the store answered `read`'s operation (nil: none asked): the answer, with a refresh's
    /// index reads granted first in the original dialect.
    @inline(__always)
    private mutating func answered(
        _ answer: consuming StoreAnswer?, _ request: PlantMessage, _ operation: PlantOperation,
        _ read: PlantRequest, _ reply: ReplyRoute, _ message: MQTTMessage, _ context: HandlerContext,
        _ store: (any StoreOperations)?
    ) -> Step {
        let (outcome, change) = service.outcome(of: read, answer: consume answer)
        if case let .failed(error) = outcome { return failed(error, operation, reply, message, context) }
        if reply.dialect == .original, case let .result(.count(count)) = outcome {
            let grant = StoreOperation.grantAllowance(
                sender: PlantService.spamKey(client: client, sender: request.sender), count: count)
            if store?.answerNow(grant) == nil {
                state = .granting(request, count: count, reply)
                return .store(grant)
            }
        }
        return rendered(outcome, request, operation, change, reply, message, context)
    }

    /// The store failed to answer `operation` (or answered what it does not answer): logged, and
    /// the request dead-lettered as `store_error`.
    private mutating func failed(
        _ error: any Error, _ operation: PlantOperation, _ reply: ReplyRoute, _ message: MQTTMessage,
        _ context: HandlerContext
    ) -> Step {
        context.logger.error("state store failed while answering \(operation.rawValue): \(error)")
        return done(.reject(message, reason: "store_error", at: context.now), message, reply, context)
    }

    /// The replies of `answer`; the follow-ups of `change` next, when there is one.
    @inline(__always)
    private mutating func rendered(
        _ answer: PlantAnswer, _ request: PlantMessage, _ operation: PlantOperation,
        _ change: PlantChange?, _ reply: ReplyRoute, _ message: MQTTMessage,
        _ context: HandlerContext
    ) -> Step {
        let output = service.rendered(
            answer, to: request, operation: operation, message: message, reply: reply, now: context.now)
        guard let change else { return done(output, message, reply, context) }
        state = .followingUp(output, change, reply)
        return .work
    }

    /// The last step: `output`, with the dead letter of a refused Response Topic.
    @inline(__always)
    private mutating func done(
        _ output: HandlerOutput, _ message: MQTTMessage, _ reply: ReplyRoute,
        _ context: HandlerContext
    ) -> Step {
        // The state is left as it is: steps that are done are dropped.
        guard reply.refusesResponseTopic else { return .done(output) }
        var output = output
        output.deadLetters.append(
            DeadLetter(
                reason: ResponseTopicPolicy.refusedReason, topic: message.topic,
                payload: message.payload, receivedAt: context.now))
        return .done(output)
    }
}
