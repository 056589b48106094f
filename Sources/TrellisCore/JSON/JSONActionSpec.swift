/// Who may send a JSON action, beyond what the broker's ACL lets through: the rules the relay
/// applies before an action is read, declared with the action itself.
public enum JSONActionAccess: Sendable, Hashable {
    /// Whoever may publish the request topic.
    case anyone
    /// On the per-client topics only operators may send it; `may` completes the refusal's
    /// "only operators …" ("change the fleet", "take backups").
    case operators(may: String)
    /// It belongs to one client (their likes, their boards): only the per-client form may send it.
    case ownClient

    /// Why `client` (nil on the shared topics) may not send `service/action`, nil when it may.
    /// `isOperator` tells whether `client` is one of the relay's operators.
    public func refusal(service: String, action: String, client: String?, isOperator: Bool) -> JSONServiceError? {
        switch self {
        case .anyone:
            return nil
        case let .operators(may):
            guard let client, !isOperator else { return nil }
            return JSONServiceError(.forbidden, "\(client) may not \(action) \(service): only operators \(may)")
        case .ownClient:
            guard client == nil else { return nil }
            return JSONServiceError(
                .invalidRequest,
                "\(service)/\(action) belongs to one client: send it on trellis/clients/<client>/request/\(service)/\(action)"
            )
        }
    }
}

/// What an action's reader gets: the request, the service's limits, and whether it came on the
/// per-client form (a catalog search may then ask for species the client has not seen).
public struct JSONActionInput<Limits: Sendable>: Sendable {
    public let request: JSONRequest
    public let limits: Limits
    public let perClient: Bool
}

/// One action of a JSON service, declared once: its service and name, who may send it, and how
/// its request is read into the service's `Request`. A service's ``JSONActionList`` is the one list
/// its routes, its `unknown_action` answer, its operators' rule and its docs table follow.
public struct JSONActionSpec<Request: Sendable, Limits: Sendable>: Sendable {
    public let service: String
    public let name: String
    public let access: JSONActionAccess
    let read: @Sendable (JSONActionInput<Limits>) throws -> Request

    public init(
        _ service: String, _ name: String, access: JSONActionAccess,
        read: @escaping @Sendable (JSONActionInput<Limits>) throws -> Request
    ) {
        self.service = service
        self.name = name
        self.access = access
        self.read = read
    }

    /// `service/action`, as the topics and the docs name it.
    public var path: String { "\(service)/\(name)" }

    /// Whether only operators may send it on the per-client topics.
    public var operatorOnly: Bool {
        if case .operators = access { return true }
        return false
    }

    /// Reads `request` as this action; a refusal is the answer's error. Who sent it is checked
    /// before, by ``JSONActionAccess/refusal(service:action:client:isOperator:)``.
    public func parse(_ request: JSONRequest, perClient: Bool, limits: Limits) -> Result<Request, JSONServiceError> {
        Result { try read(JSONActionInput(request: request, limits: limits, perClient: perClient)) }
            .mapError { $0 as? JSONServiceError ?? JSONServiceError(.invalidRequest, "\($0)") }
    }
}

/// The actions of a group of JSON services (the fleet's, the catalog's), in the order their docs
/// list them.
public struct JSONActionList<Request: Sendable, Limits: Sendable>: Sendable {
    public let all: [JSONActionSpec<Request, Limits>]

    public init(_ all: [JSONActionSpec<Request, Limits>]) {
        self.all = all
    }

    /// The services, in the order of ``all``.
    public var services: [String] {
        var seen = Set<String>()
        return all.map(\.service).filter { seen.insert($0).inserted }
    }

    /// The actions of `service`, in order.
    public func actions(of service: String) -> [JSONActionSpec<Request, Limits>] {
        all.filter { $0.service == service }
    }

    /// The action `service/action`, or the `unknown_action` refusal naming the service's actions.
    public func spec(service: String, action: String) -> Result<JSONActionSpec<Request, Limits>, JSONServiceError> {
        if let known = all.first(where: { $0.service == service && $0.name == action }) { return .success(known) }
        return .failure(.unknownAction(action, of: service, known: actions(of: service).map(\.name)))
    }

    /// Reads `request` as `service/action` sent by an operator (`perClient`) or on the shared
    /// topics: the action looked up, its per-client rule applied, its members read.
    public func parse(
        service: String, action: String, _ request: JSONRequest, perClient: Bool,
        limits: Limits
    ) -> Result<Request, JSONServiceError> {
        spec(service: service, action: action).flatMap { spec in
            if let refused = spec.access.refusal(
                service: service, action: action, client: perClient ? "" : nil,
                isOperator: true)
            {
                return .failure(refused)
            }
            return spec.parse(request, perClient: perClient, limits: limits)
        }
    }
}

extension JSONServiceError {
    /// The answer to an action `service` does not have: `unknown_action`, naming those it has.
    public static func unknownAction(_ action: String, of service: String, known: [String]) -> JSONServiceError {
        let names = known.isEmpty ? "none" : known.joined(separator: ", ")
        return JSONServiceError(.unknownAction, "\(service) has no action \"\(action)\"; its actions are \(names)")
    }
}
