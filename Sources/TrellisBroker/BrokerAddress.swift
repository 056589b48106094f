/// A broker's TCP address as `HOST:PORT`, with `[::1]:PORT` for IPv6.
public struct BrokerAddress: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

extension BrokerAddress {
    /// Parses `HOST:PORT`, `HOST` (port 1883) or `[V6]:PORT`; nil when malformed.
    public init?(parsing text: String) {
        var host = Substring(text)
        var port = 1883
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let value = Int(rest.dropFirst()) else { return nil }
                port = value
            }
        } else if let colon = host.lastIndex(of: ":") {
            guard let value = Int(host[host.index(after: colon)...]) else { return nil }
            port = value
            host = host[..<colon]
        }
        guard !host.isEmpty, (1...65535).contains(port) else { return nil }
        self.init(host: String(host), port: port)
    }
}
