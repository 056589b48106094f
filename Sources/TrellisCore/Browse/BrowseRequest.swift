/// A request to the browse service: `ROOT`, `DRILL` or `DETAIL`.
public enum BrowseRequest: Sendable, Equatable {
    /// The top-level entities, a page of them.
    case root(offset: Int, limit: Int)
    /// The children and grandchildren of the named entities.
    case drill([BrowseTarget])
    /// Everything needed to show the named entities.
    case detail([BrowseTarget])

    /// Rows of one ROOT page unless `limit` says otherwise.
    public static let defaultLimit = 500
    /// The most rows one ROOT page, and the most entities one DRILL or DETAIL, may ask for.
    public static let maximumEntities = 1000

    /// Reads a request; every failure names the member.
    public static func parse(_ request: JSONRequest) -> Result<BrowseRequest, JSONServiceError> {
        let key: String
        switch request.string("requestKey") {
        case let .failure(error): return .failure(error)
        case let .success(value): key = value
        }
        switch key {
        case "ROOT":
            if let error = request.requireOnly(["requestKey", "offset", "limit"]) { return .failure(error) }
            let offset: Int?
            let limit: Int?
            switch request.optionalInteger("offset", in: 0...Int(Int32.max)) {
            case let .failure(error): return .failure(error)
            case let .success(value): offset = value
            }
            switch request.optionalInteger("limit", in: 1...maximumEntities) {
            case let .failure(error): return .failure(error)
            case let .success(value): limit = value
            }
            return .success(.root(offset: offset ?? 0, limit: limit ?? defaultLimit))
        case "DRILL", "DETAIL":
            if let error = request.requireOnly(["requestKey", "entities"]) { return .failure(error) }
            return targets(request.members["entities"]).map { key == "DRILL" ? .drill($0) : .detail($0) }
        default:
            return .failure(.invalid("requestKey", "ROOT, DRILL or DETAIL"))
        }
    }

    private static func targets(_ value: JSONValue?) -> Result<[BrowseTarget], JSONServiceError> {
        guard let value else { return .failure(.missing("entities")) }
        guard case let .array(items) = value else {
            return .failure(.invalid("entities", "a list of {\"PERM_ID\",\"REFCON\"}"))
        }
        guard items.count <= maximumEntities else {
            return .failure(
                JSONServiceError(
                    .tooLarge,
                    "the member \"entities\" names \(items.count) entities; at most \(maximumEntities) at once"))
        }
        var targets: [BrowseTarget] = []
        for item in items {
            guard case let .object(members) = item, case let .string(permID)? = members["PERM_ID"] else {
                return .failure(.invalid("entities", "a list of objects with a string PERM_ID"))
            }
            var refcon: String?
            switch members["REFCON"] {
            case nil, .null?: refcon = nil
            case let .string(text)?: refcon = text.isEmpty ? nil : text
            default: return .failure(.invalid("entities", "a list whose REFCON members are strings"))
            }
            targets.append(BrowseTarget(permID: permID, refcon: refcon))
        }
        return .success(targets)
    }
}

/// An entity a DRILL or DETAIL names: its PERM_ID and the REFCON the client got with it.
public struct BrowseTarget: Sendable, Hashable {
    public var permID: String
    public var refcon: String?

    public init(permID: String, refcon: String?) {
        self.permID = permID
        self.refcon = refcon
    }

    /// The entity, or why it cannot be one: an unknown PERM_ID form or a REFCON of another entity.
    public func resolve() -> Result<EntityRef, BrowseMissing> {
        guard let ref = EntityRef(permID: permID) else {
            return .failure(BrowseMissing(permID: permID, reason: "not a PERM_ID Trellis hands out"))
        }
        if let refcon, let problem = ref.refconProblem(refcon) {
            return .failure(BrowseMissing(permID: permID, reason: problem))
        }
        return .success(ref)
    }
}

/// An entity of a request that is not answered, and why.
public struct BrowseMissing: Error, Sendable, Hashable, Codable {
    public var permID: String
    public var reason: String

    public init(permID: String, reason: String) {
        self.permID = permID
        self.reason = reason
    }

    enum CodingKeys: String, CodingKey {
        case permID = "PERM_ID"
        case reason
    }
}
