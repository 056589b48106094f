/// Which `Host` names a web page may reach Trellis's HTTP servers by: what stops DNS rebinding. A page
/// at `http://evil.example:3001` whose name the attacker's DNS server later points at the household's
/// Pi keeps its origin, so the browser lets it read the answers, and it sends `Host` and `Origin` both
/// `evil.example:3001`: nothing but the `Host` name tells it from a page the Pi's owner meant. An IP
/// literal or `localhost` cannot be rebound; any other name must be listed (`http.allowed_hosts`).
///
/// Only requests a web page makes are held to this (``isFromPage(origin:fetchSite:)``): the apps,
/// scripts, probes and Prometheus dial any name they were given and send neither `Origin` nor
/// `Sec-Fetch-Site`.
public struct HostPolicy: Sendable, Equatable {
    /// The listed names, in lower case, without a port.
    public let names: Set<String>
    /// Whether `*` was listed: every name is trusted (no protection against DNS rebinding).
    public let allowsAny: Bool

    /// IP literals and `localhost` only.
    public static let literalsOnly = HostPolicy(names: [], allowsAny: false)

    init(names: Set<String>, allowsAny: Bool) {
        self.names = names
        self.allowsAny = allowsAny
    }

    /// The policy of a comma-separated list of host names such as `trellis.lan, pi.local`, or the
    /// entry that is not a host name.
    public static func parse(_ list: String) -> Result<HostPolicy, HostListError> {
        CommaList.read(list) { entry in
            let name = entry.lowercased()
            guard name.count <= 253, !name.hasPrefix("."), !name.hasPrefix("-"),
                name.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "-" })
            else { return nil }
            return name
        }
        .map { HostPolicy(names: $0.entries, allowsAny: $0.any) }
        .mapError { HostListError(entry: $0.entry) }
    }

    /// An entry of the list that is not a host name.
    public struct HostListError: Error, Equatable, CustomStringConvertible {
        public let entry: String
        public var description: String {
            "\"\(entry)\" is not a host name: letters, digits, dots and hyphens, without a scheme or port, or *"
        }
    }

    /// Whether a request whose `Host` header is `host` may be served to a web page: an IP literal,
    /// `localhost`, or a listed name, with any port. No `Host` at all (HTTP/1.0) is not trusted.
    public func trusts(_ host: String?) -> Bool {
        guard let host, let name = Self.name(ofHost: host) else { return false }
        return allowsAny || name == "localhost" || Self.isIPLiteral(name) || names.contains(name)
    }

    /// Whether a request was made by a web page: it names the page's origin, or the browser's
    /// `Sec-Fetch-Site` says a page (not the user typing an address, `none`) made it.
    public static func isFromPage(origin: String?, fetchSite: String?) -> Bool {
        origin != nil || (fetchSite.map { $0.lowercased() != "none" } ?? false)
    }

    /// The name of a `Host` header in lower case, without its port; an IPv6 literal keeps its brackets.
    static func name(ofHost host: String) -> String? {
        let lower = host.lowercased()
        if lower.hasPrefix("[") {
            guard let close = lower.firstIndex(of: "]") else { return nil }
            return String(lower[...close])
        }
        let name =
            lower.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return name.isEmpty ? nil : name
    }

    /// A dotted IPv4 address, or an IPv6 address in brackets.
    static func isIPLiteral(_ name: String) -> Bool {
        if name.hasPrefix("[") {
            let inner = name.dropFirst().dropLast()
            return name.hasSuffix("]") && inner.contains(":")
                && inner.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && part.allSatisfy(\.isNumber)
                    && (Int(part) ?? 256) <= 255
            }
    }
}
