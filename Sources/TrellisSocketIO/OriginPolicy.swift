/// Which web pages may use the Socket.IO endpoint. A browser names the page that makes a request in
/// `Origin`; without a check, any page a household member opens could register for every button (and
/// read the presses) with the browser's own network position. Allowed: no `Origin` at all (the iOS,
/// Android and Python clients send none), the endpoint's own origin (the same host and port as the
/// request's `Host`) when ``hosts`` trusts that `Host` (else a rebound page passes as its own), and the
/// configured ones (`buttons.socketio_allowed_origins`). `*` allows every origin, as engine.io's server
/// does; `null` is the origin of sandboxed and `file:` pages.
public struct OriginPolicy: Sendable, Equatable {
    /// The configured origins, normalised (``normalised(_:)``).
    public let allowed: Set<String>
    /// Whether `*` was configured.
    public let allowsAny: Bool
    /// The `Host` names a page may reach the endpoint by (`http.allowed_hosts`).
    public var hosts = HostPolicy.literalsOnly

    public enum Decision: String, Sendable, Equatable {
        /// No `Origin`: not a browser's cross-site request.
        case noOrigin = "no_origin"
        case own, configured
        case foreign = "foreign_origin"
        /// A page's request for a `Host` name that is not trusted: what a DNS-rebinding page sends.
        case unknownHost = "unknown_host"

        public var isAllowed: Bool { self != .foreign && self != .unknownHost }
    }

    /// Only the endpoint's own origin (and requests without one).
    public static let ownOnly = OriginPolicy(allowed: [], allowsAny: false)

    init(allowed: Set<String>, allowsAny: Bool) {
        self.allowed = allowed
        self.allowsAny = allowsAny
    }

    /// The policy of a comma-separated list such as `http://p2o.lan:3000, https://buttons.example`,
    /// or a sentence saying which entry is not an origin.
    public static func parse(_ list: String) -> Result<OriginPolicy, OriginListError> {
        CommaList.read(list, normalised)
            .map { OriginPolicy(allowed: $0.entries, allowsAny: $0.any) }
            .mapError { OriginListError(entry: $0.entry) }
    }

    /// An entry of the list that is not `scheme://host[:port]`.
    public struct OriginListError: Error, Equatable, CustomStringConvertible {
        public let entry: String
        public var description: String {
            "\"\(entry)\" is not an origin: http://HOST[:PORT] or https://HOST[:PORT] without a path, null, or *"
        }
    }

    /// This policy with `hosts` as the trusted `Host` names.
    public func trusting(_ hosts: HostPolicy) -> OriginPolicy {
        var policy = self
        policy.hosts = hosts
        return policy
    }

    /// The decision for a request with `origin` (its `Origin` header) sent to `host` (its `Host`),
    /// `fetchSite` its `Sec-Fetch-Site`. A configured origin passes whatever the `Host`; the own
    /// origin, and a page's request without `Origin` (a browser's same-origin GET), only to a
    /// trusted `Host`.
    public func decide(origin: String?, host: String?, fetchSite: String? = nil) -> Decision {
        guard let origin else {
            return HostPolicy.isFromPage(origin: nil, fetchSite: fetchSite) && !hosts.trusts(host)
                ? .unknownHost : .noOrigin
        }
        guard let normal = Self.normalised(origin) else { return .foreign }
        if allowsAny || allowed.contains(normal) { return .configured }
        if let host, let own = Self.authority(of: normal),
            own == Self.hostAuthority(host, scheme: Self.scheme(of: normal))
        {
            return hosts.trusts(host) ? .own : .unknownHost
        }
        return .foreign
    }

    /// `scheme://host[:port]` in lower case with the scheme's default port dropped, `null` as such;
    /// nil for anything else (a path, a user, another scheme, white space).
    public static func normalised(_ origin: String) -> String? {
        let lower = origin.lowercased()
        if lower == "null" { return lower }
        guard let scheme = ["http", "https"].first(where: { lower.hasPrefix($0 + "://") }) else { return nil }
        let rest = lower.dropFirst(scheme.count + 3)
        guard !rest.isEmpty, !rest.contains(where: { "/?#@ \t\\".contains($0) }) else { return nil }
        return scheme + "://" + hostAuthority(String(rest), scheme: scheme)
    }

    /// `host[:port]` of a `Host` header in lower case, without the default port of `scheme`.
    static func hostAuthority(_ host: String, scheme: String?) -> String {
        let lower = host.lowercased()
        for (name, port) in [("http", ":80"), ("https", ":443")] where scheme == name && lower.hasSuffix(port) {
            return String(lower.dropLast(port.count))
        }
        return lower
    }

    static func scheme(of normal: String) -> String? {
        normal.firstRange(of: "://").map { String(normal[..<$0.lowerBound]) }
    }

    static func authority(of normal: String) -> String? {
        normal.firstRange(of: "://").map { String(normal[$0.upperBound...]) }
    }
}
