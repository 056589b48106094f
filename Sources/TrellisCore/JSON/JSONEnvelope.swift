#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The reply envelope of every JSON service, written as compact JSON with sorted keys so the
/// same answer always gives the same bytes:
/// `{"data":…,"status":"ok","transaction":…}` or
/// `{"code":"…","error":"…","status":"error","transaction":…}` (`transaction` only when the
/// request had one).
public enum JSONEnvelope {
    /// A successful reply carrying `data`.
    public static func ok(_ data: some Encodable, transaction: JSONValue?) -> [UInt8] {
        encode(OK(data: data, status: "ok", transaction: transaction))
    }

    /// A refusal.
    public static func error(_ error: JSONServiceError, transaction: JSONValue?) -> [UInt8] {
        encode(Failure(code: error.code.rawValue, error: error.message, status: "error", transaction: transaction))
    }

    /// Any value as compact JSON with sorted keys and unescaped slashes.
    public static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(value))
        } catch {
            return Array(#"{"code":"internal_error","error":"the reply could not be encoded","status":"error"}"#.utf8)
        }
    }

    private struct OK<Data: Encodable>: Encodable {
        var data: Data
        var status: String
        var transaction: JSONValue?
    }

    private struct Failure: Encodable {
        var code: String
        var error: String
        var status: String
        var transaction: JSONValue?
    }
}

/// The topics of the JSON services: `<prefix>/request/<service>/<action>` answered on
/// `<prefix>/response/<service>/<action>`, and the per-client form
/// `<prefix>/clients/<client>/request/<service>/<action>` answered on
/// `<prefix>/clients/<client>/response/<service>/<action>`.
public struct JSONTopics: Sendable, Hashable {
    /// Trellis's topic prefix (`trellis`).
    public var prefix: String

    public init(prefix: String) {
        self.prefix = prefix
    }

    /// The request topic (filter, with `+` for wildcards) of `service`/`action`; an empty
    /// `action` names a service that takes no action level (`trellis/request/browse`).
    public func request(service: String, action: String, client: String? = nil) -> String {
        "\(base(client))/request/\(service)" + (action.isEmpty ? "" : "/\(action)")
    }

    /// The reply topic of a request on `service`/`action`.
    public func response(service: String, action: String, client: String? = nil) -> String {
        "\(base(client))/response/\(service)" + (action.isEmpty ? "" : "/\(action)")
    }

    private func base(_ client: String?) -> String {
        client.map { "\(prefix)/clients/\($0)" } ?? prefix
    }
}
