#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Which dead letters an operator asks for: `trellis/request/deadletters/list` and
/// `trellis deadletters` read the same query, and the store answers it newest first.
///
/// Every filter is optional; together they all apply. A page is at most ``maximumLimit`` letters;
/// the next page starts below the `id` of the last one (``before``), so letters recorded meanwhile
/// never shift a page.
public struct DeadLetterQuery: Sendable, Equatable {
    /// Letters per page when the request names no `limit`.
    public static let defaultLimit = 20
    /// The most letters one page holds (each payload may be up to 64 KiB).
    public static let maximumLimit = 100

    /// Only letters of this reason (`invalid_op`, `spam_muted`, …).
    public var reason: String?
    /// Only letters whose topic starts with this text (`rpi/`, `devices/node7/`).
    public var topicPrefix: String?
    /// Only letters received at or after this time.
    public var since: Date?
    /// Only letters whose store id is below this one: the page after a letter.
    public var before: Int64?
    /// The most letters returned.
    public var limit: Int

    public init(
        reason: String? = nil, topicPrefix: String? = nil, since: Date? = nil, before: Int64? = nil,
        limit: Int = DeadLetterQuery.defaultLimit
    ) {
        self.reason = reason.flatMap { $0.isEmpty ? nil : $0 }
        self.topicPrefix = topicPrefix.flatMap { $0.isEmpty ? nil : $0 }
        self.since = since
        self.before = before
        self.limit = max(0, limit)
    }

    /// The members `deadletters/list` takes.
    public static let members: Set<String> = ["reason", "topic_prefix", "since", "cursor", "limit"]

    /// Reads a `deadletters/list` request: `reason`, `topic_prefix`, `since` (see ``DeadLetterSince``),
    /// `cursor` (a `next_cursor` of an earlier reply) and `limit` (1–100, default 20).
    public static func read(_ request: JSONRequest, now: Date) -> Result<DeadLetterQuery, JSONServiceError> {
        if let refusal = request.requireOnly(members) { return .failure(refusal) }
        let reason: String?
        let prefix: String?
        let limit: Int?
        switch (
            request.optionalString("reason"), request.optionalString("topic_prefix"),
            request.optionalInteger("limit", in: 1...maximumLimit)
        ) {
        case let (.success(r), .success(p), .success(l)): (reason, prefix, limit) = (r, p, l)
        case let (.failure(error), _, _), let (_, .failure(error), _), let (_, _, .failure(error)):
            return .failure(error)
        }
        var since: Date?
        switch request.members["since"] {
        case nil, .null?: break
        case let .string(text)?:
            guard let date = DeadLetterSince.parse(text, now: now) else { return .failure(DeadLetterSince.refusal) }
            since = date
        case let value?:
            guard let seconds = value.doubleValue, seconds.isFinite, seconds >= 0, seconds < 1.0e11 else {
                return .failure(DeadLetterSince.refusal)
            }
            since = Date(timeIntervalSince1970: seconds)
        }
        var before: Int64?
        switch request.optionalString("cursor") {
        case let .failure(error): return .failure(error)
        case let .success(text?):
            guard let id = Int64(text), id > 0 else {
                return .failure(.invalid("cursor", "a next_cursor from an earlier reply"))
            }
            before = id
        case .success(nil): break
        }
        return .success(
            DeadLetterQuery(
                reason: reason, topicPrefix: prefix, since: since, before: before,
                limit: limit ?? defaultLimit))
    }
}

/// The `since` of a dead-letter query: an ISO 8601 time (`2026-05-01T10:00:00Z`), Unix seconds, or
/// a span back from now: a whole number and `s`, `m`, `h`, `d` or `w` (`90m`, `24h`, `7d`).
public enum DeadLetterSince {
    static let refusal = JSONServiceError.invalid(
        "since",
        "an ISO 8601 time such as \"2026-05-01T10:00:00Z\", Unix seconds, or a span back from now such as \"24h\"")

    /// The time `text` names, nil when it is none of the three forms.
    public static func parse(_ text: String, now: Date) -> Date? {
        if let date = ISO8601Time.parse(text) { return date }
        if let seconds = Double(text), seconds.isFinite, seconds >= 0, seconds < 1.0e11 {
            return Date(timeIntervalSince1970: seconds)
        }
        return span(text).map { now.addingTimeInterval(-$0) }
    }

    /// The seconds of a span such as `24h`, nil when `text` is not one.
    public static func span(_ text: String) -> Double? {
        guard let unit = text.last, let count = Int(text.dropLast()), count >= 0, count <= 100_000,
            text.first?.isASCII == true, text.first?.isNumber == true
        else { return nil }
        switch unit {
        case "s": return Double(count)
        case "m": return Double(count) * 60
        case "h": return Double(count) * 3600
        case "d": return Double(count) * 86400
        case "w": return Double(count) * 604_800
        default: return nil
        }
    }
}
