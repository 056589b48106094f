import Foundation
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// What an action answers: data for a `"status":"ok"` reply, or a refusal.
public enum JSONAnswer: Sendable {
    case ok(any Encodable & Sendable)
    case error(JSONServiceError)
}

/// An action's outcome: its answer and whatever else it publishes or rejects.
public struct JSONResult: Sendable {
    public var answer: JSONAnswer
    public var output: HandlerOutput

    public init(_ answer: JSONAnswer, output: HandlerOutput = HandlerOutput()) {
        self.answer = answer
        self.output = output
    }

    public static func ok(_ data: any Encodable & Sendable, output: HandlerOutput = HandlerOutput()) -> JSONResult {
        JSONResult(.ok(data), output: output)
    }

    public static func error(_ code: JSONErrorCode, _ message: String) -> JSONResult {
        JSONResult(.error(JSONServiceError(code, message)))
    }

    /// The answer when the state store failed: `internal_error` (the request may be retried) and
    /// a `store_error` dead letter naming the request topic.
    public static func storeFailure(topic: String, at now: Date) -> JSONResult {
        var result = JSONResult.error(.internalError, "Trellis could not reach its state store; try again")
        result.output.deadLetters.append(DeadLetter(reason: "store_error", topic: topic, payload: [], receivedAt: now))
        return result
    }
}

/// Who sent a request and where: the per-client form names the client.
public struct JSONCall: Sendable {
    public var service: String
    public var action: String
    /// The `<client>` of `trellis/clients/<client>/request/…`; nil on the shared topics.
    public var client: String?
    public var context: HandlerContext
}

/// One action of a JSON service as the relay routes it: its name, who may send it, and what it does.
public struct JSONAction: Sendable {
    public var name: String
    /// Who may send it beyond the broker's ACL (operators only, the client's own form only).
    public var access: JSONActionAccess
    public var perform: @Sendable (JSONRequest, JSONCall) async -> JSONResult

    public init(
        _ name: String, access: JSONActionAccess = .anyone,
        perform: @escaping @Sendable (JSONRequest, JSONCall) async -> JSONResult
    ) {
        self.name = name
        self.access = access
        self.perform = perform
    }

    /// The action `spec` declares: its request read as the spec says (a refusal answers the
    /// reader's error), then `perform`ed with what was read.
    public init<Request, Limits>(
        _ spec: JSONActionSpec<Request, Limits>, limits: Limits,
        perform: @escaping @Sendable (Request, JSONCall) async -> JSONResult
    ) {
        self.init(spec.name, access: spec.access) { request, call in
            switch spec.parse(request, perClient: call.client != nil, limits: limits) {
            case let .failure(error): JSONResult(.error(error))
            case let .success(read): await perform(read, call)
            }
        }
    }
}

/// A service spoken in the JSON envelope: requests on `trellis/request/<service>/<action>` (or
/// `trellis/clients/<client>/request/<service>/<action>`), replies on the matching `response`
/// topic and on the request's v5 Response Topic with its Correlation Data.
///
/// Each action is its own pair of routes (shared and per-client form); a fallback route per form
/// answers `unknown_action` for any other action of the service.
public struct JSONService: Sendable {
    public let name: String
    public let actions: [JSONAction]
    let settings: RelaySettings

    public init(_ name: String, settings: RelaySettings, actions: [JSONAction]) {
        self.name = name
        self.settings = settings
        self.actions = actions
    }

    var topics: JSONTopics { JSONTopics(prefix: settings.trellisPrefix) }

    /// The routes of every service of `list`, each action's request read as its spec says and
    /// then `perform`ed.
    public static func routes<Request, Limits>(
        of list: JSONActionList<Request, Limits>, limits: Limits, settings: RelaySettings,
        perform: @escaping @Sendable (Request, JSONCall) async -> JSONResult
    ) -> [Route] {
        list.services.flatMap { service in
            JSONService(
                service, settings: settings,
                actions: list.actions(of: service).map { JSONAction($0, limits: limits, perform: perform) }
            ).routes
        }
    }

    /// This service's entries of the routing table.
    public var routes: [Route] {
        var routes: [Route] = []
        for action in actions {
            routes.append(
                Route(
                    topics.request(service: name, action: action.name), service: name,
                    handler: ClosureHandler { message, context in
                        await handle(message, action: action.name, client: nil, context: context)
                    }))
            routes.append(
                Route(
                    topics.request(service: name, action: action.name, client: "+"), service: name,
                    handler: ClosureHandler { message, context in
                        await handle(message, action: action.name, client: context.captures[0], context: context)
                    }))
        }
        // A service whose only action is unnamed lives on `…/request/<service>` itself.
        if actions.count == 1, actions[0].name.isEmpty { return routes }
        routes.append(
            Route(
                topics.request(service: name, action: "+"), service: name, fallback: true,
                handler: ClosureHandler { message, context in
                    await handle(message, action: context.captures[0], client: nil, context: context)
                }))
        routes.append(
            Route(
                topics.request(service: name, action: "+", client: "+"), service: name, fallback: true,
                handler: ClosureHandler { message, context in
                    await handle(message, action: context.captures[1], client: context.captures[0], context: context)
                }))
        return routes
    }

    /// Answers one request.
    func handle(_ message: MQTTMessage, action name: String, client: String?, context: HandlerContext) async
        -> HandlerOutput
    {
        // A retained request would run again every time Trellis subscribes.
        if message.retain { return .reject(message, reason: "retained_request", at: context.now) }
        if case let .refused(_, retryAfter) = context.limits.admitRequest(
            client: client, at: context.now, limit: settings.requestRate)
        {
            return rateLimited(message, action: name, client: client, retryAfter: retryAfter, context: context)
        }
        let request: JSONRequest
        switch JSONRequest.parse(message.payload) {
        case let .failure(error):
            var output = HandlerOutput.reject(message, reason: error.code.rawValue, at: context.now)
            output.publishes = replies(
                to: message, action: name, client: client, payload: JSONEnvelope.error(error, transaction: nil))
            return output
        case let .success(parsed):
            request = parsed
        }
        var result: JSONResult
        if let action = actions.first(where: { $0.name == name }) {
            let isOperator = client.map(settings.operators.contains) ?? false
            if let refused = action.access.refusal(
                service: self.name, action: name, client: client, isOperator: isOperator)
            {
                result = JSONResult(.error(refused))
            } else {
                result = await action.perform(
                    request, JSONCall(service: self.name, action: name, client: client, context: context))
            }
        } else {
            result = JSONResult(.error(.unknownAction(name, of: self.name, known: actions.map(\.name))))
        }
        let payload =
            switch result.answer {
            case let .ok(data): JSONEnvelope.ok(data, transaction: request.transaction)
            case let .error(error): JSONEnvelope.error(error, transaction: request.transaction)
            }
        var output = HandlerOutput()
        output.publishes = replies(to: message, action: name, client: client, payload: payload)
        output.merge(result.output)
        if let refused = ResponseTopicPolicy.refusal(of: message, settings: settings, at: context.now) {
            output.deadLetters.append(refused)
        }
        return output
    }

    /// A request over the client's rate (``RelaySettings/requestRate``): answered `rate_limited`
    /// without being read (its transaction is not echoed), counted and logged; not dead-lettered,
    /// so a flood writes nothing to the store.
    func rateLimited(
        _ message: MQTTMessage, action: String, client: String?, retryAfter: Double,
        context: HandlerContext
    ) -> HandlerOutput {
        let rate = settings.requestRate
        context.limits.refused(
            .requests, client: client ?? "", at: context.now, logger: context.logger,
            detail: "more than \(rate.burst) JSON requests at once or \(rate.rate) a second")
        let error = JSONServiceError(
            .rateLimited,
            "more than \(rate.rate) requests a second from \(client ?? "the shared topics"); "
                + "try again in \(Int(retryAfter.rounded(.up))) s")
        var output = HandlerOutput()
        output.publishes = replies(
            to: message, action: action, client: client, payload: JSONEnvelope.error(error, transaction: nil))
        return output
    }

    /// The reply on the service's response topic, and on the request's Response Topic (with its
    /// Correlation Data) when it has one that is allowed.
    func replies(to request: MQTTMessage, action: String, client: String?, payload: [UInt8]) -> [MQTTMessage] {
        let qos = PublishQoS.answer(to: request.qos)
        let topic = topics.response(service: name, action: action, client: client)
        guard let responseTopic = request.properties.responseTopic,
            !ResponseTopicPolicy.refuses(responseTopic, forRequest: request.topic, settings: settings)
        else {
            return [MQTTMessage(topic: topic, payload: payload, qos: qos)]
        }
        let correlated = MQTTProperties(correlationData: request.properties.correlationData)
        if responseTopic == topic {
            return [MQTTMessage(topic: topic, payload: payload, qos: qos, properties: correlated)]
        }
        return [
            MQTTMessage(topic: topic, payload: payload, qos: qos),
            MQTTMessage(topic: responseTopic, payload: payload, qos: qos, properties: correlated)
        ]
    }
}
