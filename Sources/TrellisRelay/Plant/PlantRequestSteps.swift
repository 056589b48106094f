import Foundation
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// A plant tracker request's whole path, as steps (``HandlerSteps``), in order:
///
/// 1. ``start(_:context:)``: the payload is parsed and validated once (``PlantProtocol``); a
///    retained request, a sender not matching its per-client topic, and an empty sender in the
///    released app's dialect are refused; any other message with an accountable sender is counted
///    against the spam limit: it waits for ``StoreOperation/admitMessage(sender:at:limit:window:usingAllowance:)``.
/// 2. ``admitted(_:context:)``: a sender over the limit is kicked once, then muted; the host's own
///    messages and error tags are not answered; a rejected message gets its error reply; a request
///    is read in the reply topic's dialect and waits for its store operation (``PlantService/operation(for:)``).
/// 3. ``answered(_:context:)``: the store's answer becomes the plant answer and the change it made
///    (``PlantService/outcome(of:answer:)``); in the original dialect a plant count grants the
///    refresh's index reads that follow it: it waits for ``StoreOperation/grantAllowance(sender:count:)``.
/// 4. ``rendered(_:change:context:)``: the replies in the reply topic's dialect (and, on a Response
///    Topic, the lossless one); a change waits for its follow-ups, the service's own work
///    (``PlantService/followUps(of:context:)``), in ``work(_:context:)``.
///
/// Every output ends with the dead letter of a refused Response Topic, when the request named one.
struct PlantRequestSteps: HandlerSteps {
    /// What the next step needs.
    enum State: Sendable {
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

    mutating func start(_ message: MQTTMessage, context: HandlerContext) -> Step {
        let parsed = PlantProtocol.parse(message.payload, hostName: settings.hostName)
        let reply = ReplyRoute(service: service, request: message, client: client)
        if let refusal = service.refusalBeforeCounting(message, claimedSender: parsed.claimedSender,
                                                       isRequest: parsed.requestOperation != nil, reply: reply,
                                                       client: client, now: context.now) {
            return done(refusal, message, reply, context)
        }
        guard let sender = parsed.accountableSender else { return admitted(parsed, reply, message, context) }
        var indexRead = false
        if reply.dialect == .original, case let .request(request, .plantInfoOnStartup) = parsed {
            indexRead = PlantDialect.refreshIndex(request.payload) != nil
        }
        state = .admitting(parsed, reply)
        return .store(.admitMessage(sender: PlantService.spamKey(client: client, sender: sender), at: context.now,
                                    limit: settings.spamLimit, window: settings.spamWindow, usingAllowance: indexRead))
    }

    mutating func resume(_ answer: Result<StoreAnswer, any Error>, message: MQTTMessage, context: HandlerContext) -> Step {
        // Moved out, not copied: what the step needs is taken from the state it leaves.
        let current = state
        state = .done
        switch current {
        case let .admitting(parsed, reply):
            var verdict = SpamVerdict.allowed   // a store that fails to count lets the message through
            switch answer {
            case let .success(.verdict(given)): verdict = given
            case let .failure(error):
                context.logger.error("state store failed while counting a message against the spam limit: \(error)")
            case .success: break
            }
            if let refusal = service.refusal(of: verdict, message: message, parsed: parsed, reply: reply, now: context.now) {
                return done(refusal, message, reply, context)
            }
            return admitted(parsed, reply, message, context)
        case let .answering(request, operation, read, reply):
            let (outcome, change) = service.outcome(of: read, answer: answer)
            if case let .failed(error) = outcome {
                context.logger.error("state store failed while answering \(operation.rawValue): \(error)")
                return done(.reject(message, reason: "store_error", at: context.now), message, reply, context)
            }
            if reply.dialect == .original, case let .result(.count(count)) = outcome {
                state = .granting(request, count: count, reply)
                return .store(.grantAllowance(sender: PlantService.spamKey(client: client, sender: request.sender), count: count))
            }
            return rendered(outcome, to: request, operation: operation, change: change, message, reply, context)
        case let .granting(request, count, reply):
            if case let .failure(error) = answer {
                context.logger.error("state store failed while granting a refresh's index reads: \(error)")
            }
            return rendered(.result(.count(count)), to: request, operation: .numPlants, change: nil, message, reply, context)
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

    /// After admission: what the parse result calls for.
    private mutating func admitted(_ parsed: consuming PlantParseResult, _ reply: ReplyRoute, _ message: MQTTMessage,
                                   _ context: HandlerContext) -> Step {
        switch consume parsed {
        case .ownMessage:
            return done(.none, message, reply, context)
        case let .incomingError(error):
            context.logger.info("error tag received; not answered",
                                metadata: ["operation": "\(error.operation)", "sender": "\(error.sender)"])
            return done(.none, message, reply, context)
        case let .rejected(rejection):
            var output = HandlerOutput()
            output.deadLetters.append(DeadLetter(reason: rejection.tag?.rawValue ?? rejection.reason, topic: message.topic,
                                                 payload: message.payload, receivedAt: context.now))
            let hostName = settings.hostName
            output.publish(contentsOf: reply.messages { $0.error(for: rejection, hostName: hostName) })
            return done(output, message, reply, context)
        case let .request(request, operation):
            switch reply.dialect.read(operation, payload: request.payload, maximumNameLength: settings.maxPlantNameLength) {
            case let .failure(tag):
                return rendered(.error(tag), to: request, operation: operation, change: nil, message, reply, context)
            case let .success(read):
                guard let storeOperation = service.operation(for: read) else {
                    // Nothing to ask the store (a rename to the same name).
                    let (outcome, change) = service.outcome(of: read, answer: nil)
                    return rendered(outcome, to: request, operation: operation, change: change, message, reply, context)
                }
                state = .answering(request, operation, read, reply)
                return .store(storeOperation)
            }
        }
    }

    /// The replies of `answer`; the follow-ups of `change` next, when there is one.
    private mutating func rendered(_ answer: PlantAnswer, to request: PlantMessage, operation: PlantOperation,
                                   change: PlantChange?, _ message: MQTTMessage, _ reply: ReplyRoute,
                                   _ context: HandlerContext) -> Step {
        let output = service.rendered(answer, to: request, operation: operation, message: message, reply: reply, now: context.now)
        guard let change else { return done(output, message, reply, context) }
        state = .followingUp(output, change, reply)
        return .work
    }

    /// The last step: `output`, with the dead letter of a refused Response Topic.
    private mutating func done(_ output: HandlerOutput, _ message: MQTTMessage, _ reply: ReplyRoute,
                               _ context: HandlerContext) -> Step {
        state = .done
        guard reply.refusesResponseTopic else { return .done(output) }
        var output = output
        output.deadLetters.append(DeadLetter(reason: ResponseTopicPolicy.refusedReason, topic: message.topic,
                                             payload: message.payload, receivedAt: context.now))
        return .done(output)
    }
}
