import TrellisCore

/// A TCP connection between a client and a broker port, whichever direction a segment went.
struct ConnectionKey: Hashable {
    var clientAddress: [UInt8]
    var clientPort: UInt16
    var brokerAddress: [UInt8]
    var brokerPort: UInt16

    /// `127.0.0.1:50312 → 127.0.0.1:1883` or `[::1]:50312 → [::1]:1883`: how problems name it.
    var name: String {
        Self.endpoint(clientAddress, clientPort) + " → " + Self.endpoint(brokerAddress, brokerPort)
    }

    static func endpoint(_ address: [UInt8], _ port: UInt16) -> String {
        address.count == 4 ? address.map(String.init).joined(separator: ".") + ":\(port)" : "[\(ipv6(address))]:\(port)"
    }

    /// An IPv6 address in its short form (RFC 5952): the longest run of zero groups as `::`.
    static func ipv6(_ address: [UInt8]) -> String {
        guard address.count == 16 else { return address.map { String($0) }.joined(separator: ".") }
        let groups = (0..<8).map { UInt16(address[2 * $0]) << 8 | UInt16(address[2 * $0 + 1]) }
        var best = (start: -1, length: 0)
        var index = 0
        while index < 8 {
            guard groups[index] == 0 else { index += 1; continue }
            var end = index
            while end < 8 && groups[end] == 0 { end += 1 }
            if end - index > best.length && end - index >= 2 { best = (index, end - index) }
            index = end
        }
        let text = groups.map { String($0, radix: 16) }
        guard best.start >= 0 else { return text.joined(separator: ":") }
        let head = text[..<best.start].joined(separator: ":")
        let tail = text[(best.start + best.length)...].joined(separator: ":")
        return head + "::" + tail
    }
}

/// Which way a message went.
public enum WireDirection: String, Sendable, Hashable {
    /// A client published it to the broker: an input.
    case toBroker = "client → broker"
    /// The broker delivered it to a subscriber: what the original host's answers looked like.
    case toClient = "broker → client"
}

/// One PUBLISH read from the wire.
public struct WireMessage: Sendable, Hashable {
    public var direction: WireDirection
    /// The connection, as problems name it.
    public var connection: String
    /// The client id of the connection's client (the publisher, or the subscriber it was delivered to).
    public var clientID: String?
    /// The message as a capture record; `client` is set for what a client published.
    public var record: CaptureRecord
    /// The PUBLISH carried the DUP flag and was not a copy of one already read on this
    /// connection: a redelivery the receiver may have handled twice.
    public var redelivered: Bool
}
