/// One bridge to an upstream broker: its name (the key under `bridges:`), the broker's address and
/// its rules. Messages of its `out` rules are kept in the store until the upstream broker has them.
public struct BridgeSettings: Sendable, Hashable {
    public var name: String
    public var host: String
    public var port: Int
    public var rules: [BridgeRule]
    /// At most this many messages sent and not yet acknowledged upstream.
    public var window: Int

    public init(name: String, host: String, port: Int, rules: [BridgeRule], window: Int = 64) {
        self.name = name
        self.host = host
        self.port = port
        self.rules = rules
        self.window = window
    }

    /// The rules that carry local messages upstream.
    public var outRules: [BridgeRule] { rules.filter { $0.direction == .out } }

    /// The rules that carry upstream messages to the local broker.
    public var inRules: [BridgeRule] { rules.filter { $0.direction == .in } }

    /// The host and port of an `mqtt://HOST[:PORT]` URL (port 1883 when none); nil when it is not one.
    public static func address(_ url: String) -> (host: String, port: Int)? {
        guard url.hasPrefix("mqtt://") else { return nil }
        var rest = Substring(url.dropFirst("mqtt://".count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        var port = 1883
        var host = rest
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let tail = rest[rest.index(after: close)...]
            if !tail.isEmpty {
                guard tail.hasPrefix(":"), let value = Int(tail.dropFirst()) else { return nil }
                port = value
            }
        } else if let colon = rest.lastIndex(of: ":") {
            guard let value = Int(rest[rest.index(after: colon)...]) else { return nil }
            port = value
            host = rest[..<colon]
        }
        guard !host.isEmpty, !host.contains("/"), !host.contains("@"), (1...65535).contains(port) else { return nil }
        return (String(host), port)
    }

    /// Whether `name` may name a bridge: 1 to 64 of A-Z, a-z, 0-9, '_' and '-' (it is part of a
    /// client id and of the queue's rows).
    public static func isName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }
}

extension UInt8 {
    fileprivate var isASCIIAlphanumeric: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
    }
}
