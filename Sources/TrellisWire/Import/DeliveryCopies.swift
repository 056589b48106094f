import TrellisCore
import TrellisMQTTTypes

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
        let key = Key(topic: message.record.topic, payload: message.record.payload, properties: message.record.properties)
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
