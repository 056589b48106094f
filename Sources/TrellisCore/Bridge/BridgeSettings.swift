/// One bridge to an upstream broker: its name (the key under `bridges:`), the broker's address and
/// its rules. Messages of its `out` rules are kept in the store until the upstream broker has them.
public struct BridgeSettings: Sendable, Hashable {
    public var name: String
    public var host: String
    public var port: Int
    public var rules: [BridgeRule]
    /// At most this many messages sent and not yet acknowledged upstream.
    public var window: Int
    /// The most payload bytes the queue keeps; past it the oldest messages are dropped.
    public var maxBytes: Int
    /// Seconds a message may wait in the queue; older ones are dropped.
    public var maxAge: Double
    /// TLS to the upstream broker (an `mqtts://` URL); nil for plain `mqtt://`.
    public var tls: BridgeTLS?
    /// The account on the upstream broker: its user name, and the file holding its password.
    public var username: String?
    public var passwordFile: String?

    /// The queue's bounds unless configured: 64 MiB, a week.
    public static let defaultMaxBytes = 64 << 20
    public static let defaultMaxAge: Double = 7 * 24 * 3600

    public init(
        name: String, host: String, port: Int, rules: [BridgeRule], window: Int = 64,
        maxBytes: Int = defaultMaxBytes, maxAge: Double = defaultMaxAge
    ) {
        (self.name, self.host, self.port, self.rules) = (name, host, port, rules)
        (self.window, self.maxBytes, self.maxAge) = (window, maxBytes, maxAge)
    }

    /// The upstream broker as a URL, `mqtts://` for TLS (no account: that is never shown).
    public var url: String {
        "\(tls == nil ? "mqtt" : "mqtts")://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// The rules that carry local messages upstream.
    public var outRules: [BridgeRule] { rules.filter { $0.direction == .out } }

    /// The rules that carry upstream messages to the local broker.
    public var inRules: [BridgeRule] { rules.filter { $0.direction == .in } }

    /// What follows the relay's client id (or its share group's name) and a dash in the client id of
    /// the bridge's upstream connection for `direction`: `bridge-<name>` for `out`, `bridge-<name>-in`
    /// for `in`. Two connections to one broker must not share it: each would take the session from
    /// the other at every connect.
    public func connectionName(_ direction: BridgeRule.Direction) -> String {
        direction == .out ? "bridge-\(name)" : "bridge-\(name)-in"
    }

    /// The connections the bridge makes: one for each direction it has rules in.
    public var directions: [BridgeRule.Direction] {
        (outRules.isEmpty ? [] : [.out]) + (inRules.isEmpty ? [] : [.in])
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

/// The files of a bridge's TLS link: the certificate authorities to trust (the system's when nil),
/// and a client certificate with its key when the upstream broker asks for one.
public struct BridgeTLS: Sendable, Hashable {
    public var ca: String?, cert: String?, key: String?

    public init(ca: String? = nil, cert: String? = nil, key: String? = nil) {
        (self.ca, self.cert, self.key) = (ca, cert, key)
    }
}
