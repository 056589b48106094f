#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A request to a JSON service: the members of its JSON object and its `transaction`.
///
/// An empty payload is `{}`. A payload that is not UTF-8, not JSON or not an object is refused
/// with `invalid_json`; a `transaction` that is not a string or a number with `invalid_request`
/// (and then it cannot be echoed).
public struct JSONRequest: Sendable, Equatable {
    /// Every member except `transaction`.
    public var members: [String: JSONValue]
    /// The requester's `transaction`, echoed in the reply.
    public var transaction: JSONValue?

    public init(members: [String: JSONValue] = [:], transaction: JSONValue? = nil) {
        self.members = members
        self.transaction = transaction
    }

    /// Reads a request payload.
    public static func parse(_ payload: [UInt8]) -> Result<JSONRequest, JSONServiceError> {
        if payload.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) {
            return .success(JSONRequest())
        }
        guard String(validating: payload, as: UTF8.self) != nil else {
            return .failure(JSONServiceError(.invalidJSON, "the payload is not valid UTF-8 text"))
        }
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: Data(payload))
        } catch {
            return .failure(JSONServiceError(.invalidJSON, "the payload is not valid JSON"))
        }
        guard case var .object(members) = value else {
            return .failure(JSONServiceError(.invalidJSON, "the payload is \(value.kindName), not a JSON object"))
        }
        let transaction = members.removeValue(forKey: "transaction")
        switch transaction {
        case nil, .string?, .integer?, .number?:
            return .success(JSONRequest(members: members, transaction: transaction))
        case let other?:
            return .failure(.invalid("transaction", "a string or a number, not \(other.kindName)"))
        }
    }

    /// The first member not in `allowed` (sorted, so the answer is stable), if any.
    public func unexpectedMember(allowed: Set<String>) -> String? {
        members.keys.filter { !allowed.contains($0) }.min()
    }

    /// Refuses members other than `allowed` with `invalid_request`, naming the first.
    public func requireOnly(_ allowed: Set<String>) -> JSONServiceError? {
        guard let member = unexpectedMember(allowed: allowed) else { return nil }
        let list = allowed.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
        return JSONServiceError(
            .invalidRequest,
            "the member \"\(member)\" is not known here; this action takes \(list.isEmpty ? "no members" : list)")
    }

    /// A required string member.
    public func string(_ member: String) -> Result<String, JSONServiceError> {
        switch members[member] {
        case nil: .failure(.missing(member))
        case let .string(text)?: .success(text)
        case let other?: .failure(.invalid(member, "a string, not \(other.kindName)"))
        }
    }

    /// An optional string member: absent gives nil; `null` is refused.
    public func optionalString(_ member: String) -> Result<String?, JSONServiceError> {
        switch members[member] {
        case nil: .success(nil)
        case let .string(text)?: .success(text)
        case let other?: .failure(.invalid(member, "a string, not \(other.kindName)"))
        }
    }

    /// An optional whole number within `range`.
    public func optionalInteger(_ member: String, in range: ClosedRange<Int>) -> Result<Int?, JSONServiceError> {
        guard let value = members[member] else { return .success(nil) }
        guard let number = value.integerValue, number >= Int64(range.lowerBound), number <= Int64(range.upperBound)
        else {
            return .failure(.invalid(member, "a whole number from \(range.lowerBound) to \(range.upperBound)"))
        }
        return .success(Int(number))
    }
}
