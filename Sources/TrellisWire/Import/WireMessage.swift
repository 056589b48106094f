import TrellisCore
import TrellisMQTTTypes

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

/// Broker → client deliveries turned into one expected output per message.
///
/// A broker hands one publish to every subscriber, so the capture holds one copy per subscribed
/// connection. A delivery is taken as a copy when the same topic, payload and properties went to
/// another connection less than `window` before and this connection has not had it yet since.
public struct DeliveryCopies: Sendable {
    struct Key: Hashable {
        var topic: String
        var payload: [UInt8]
        var properties: MQTTProperties
    }

    struct Seen {
        var microseconds: Int64
        var connections: Set<String>
    }

    let window: Int64
    var recent: [Key: Seen] = [:]

    /// `window`: how close in time (microseconds) copies of one publish arrive; one second by default.
    public init(window: Int64 = 1_000_000) {
        self.window = window
    }

    /// True when `message` is the first delivery of its publish (keep it), false for a copy.
    public mutating func isFirst(_ message: WireMessage) -> Bool {
        let key = Key(
            topic: message.record.topic, payload: message.record.payload, properties: message.record.properties)
        let now = message.record.microseconds
        if var seen = recent[key], now - seen.microseconds <= window, !seen.connections.contains(message.connection) {
            seen.connections.insert(message.connection)
            recent[key] = seen
            return false
        }
        if recent.count > 4096 { recent = recent.filter { now - $0.value.microseconds <= window } }
        recent[key] = Seen(microseconds: now, connections: [message.connection])
        return true
    }
}
