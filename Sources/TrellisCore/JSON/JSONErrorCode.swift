/// The stable error codes of every JSON service reply (`"code"`).
public enum JSONErrorCode: String, Sendable, CaseIterable {
    /// The payload is not UTF-8, not JSON, or not a JSON object.
    case invalidJSON = "invalid_json"
    /// A member is missing, of the wrong type or out of range; the sentence names it.
    case invalidRequest = "invalid_request"
    /// The device, model or build named does not exist.
    case notFound = "not_found"
    /// The change clashes with the state, e.g. a model name that is taken.
    case conflict = "conflict"
    /// An update names a member that cannot be changed.
    case notEditable = "not_editable"
    /// A value is larger than allowed (code units over the limit).
    case tooLarge = "too_large"
    /// The service has no such action.
    case unknownAction = "unknown_action"
    /// The requester may not perform this action.
    case forbidden = "forbidden"
    /// Trellis could not carry out the request (its state store failed); it may be retried.
    case internalError = "internal_error"
    /// The same work is under way (a backup being written); ask again once it is done.
    case busy = "busy"
    /// Asked again too soon (a backup within `state.backup.request_interval`); the sentence says
    /// when the next may be asked for.
    case rateLimited = "rate_limited"
}

/// A refused request: a stable code and one clear sentence.
public struct JSONServiceError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: JSONErrorCode
    public var message: String

    public init(_ code: JSONErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// `member` is missing.
    public static func missing(_ member: String) -> JSONServiceError {
        JSONServiceError(.invalidRequest, "the member \"\(member)\" is missing")
    }

    /// `member` has the wrong type or value; `expected` says what it must be.
    public static func invalid(_ member: String, _ expected: String) -> JSONServiceError {
        JSONServiceError(.invalidRequest, "the member \"\(member)\" must be \(expected)")
    }
}
