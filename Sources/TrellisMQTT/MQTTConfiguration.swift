/// Everything needed to connect: where, as whom, and how to behave when the link drops.
public struct MQTTConfiguration: Sendable {
    /// Broker host name or address.
    public var host: String
    /// Broker TCP port.
    public var port: Int
    /// The client identifier. A fixed one plus `sessionExpiry` keeps subscriptions and queued
    /// QoS 1 messages across restarts of the client.
    public var clientID: String
    /// Seconds between keepalive pings.
    public var keepAlive: Int
    /// Credentials, when the broker requires them.
    public var username: String?
    public var password: String?
    /// Published by the broker if this client vanishes without a clean disconnect.
    public var will: MQTTWill?
    /// Start with a fresh session (true) or resume the one the broker kept (false).
    public var cleanStart: Bool
    /// Seconds the broker keeps the session after a disconnect; 0 ends it at disconnect.
    public var sessionExpiry: UInt32
    /// First and longest wait between reconnect attempts, in seconds; the wait doubles in between.
    public var reconnectDelay: ClosedRange<Double>
    /// How many QoS 1 and 2 messages may be in flight in each direction.
    public var inflightMaximum: Int
    /// Disable Nagle's algorithm, so small request/response messages leave at once.
    public var tcpNoDelay: Bool
    /// Most received messages the consumer may hold unhandled (see `MQTTClient.messageHandled()`).
    /// When reached, the network thread stops reading from the socket until the consumer catches
    /// up, so memory stays bounded under a flood. While the consumer holds any message nothing is
    /// written, so a QoS 1 or 2 acknowledgement leaves only after its message was handled and a
    /// crash loses nothing the broker saw acknowledged. The window is also the receive maximum the
    /// client announces. Nil reads without limit, acknowledges at once and needs no
    /// `messageHandled()` calls.
    ///
    /// The guarantee covers QoS 1: libmosquitto answers a QoS 2 message's first half (PUBREC)
    /// before it hands the message over. A consumer must not await a write of its own client
    /// (`publishAndWait`, `subscribe`) while it holds a message: that write waits for it.
    public var maxUnhandledMessages: Int?
    /// Connect over TLS with these settings; nil connects in plain text.
    public var tls: MQTTTLSConfiguration?
    /// The largest packet, in bytes, the broker may send this client: announced on connect as MQTT
    /// v5's Maximum Packet Size, so a broker holds a larger message back from this client instead
    /// of sending it (Mosquitto drops it for this client and logs "Dropping too large outgoing
    /// PUBLISH"). With the read-ahead window it bounds the memory a flood of huge messages can
    /// take. libmosquitto does not check the size of what it reads, so the bound rests on the
    /// broker keeping to the protocol. Nil announces none: up to the protocol's 256 MiB.
    public var maximumPacketSize: Int?

    public init(
        host: String = "127.0.0.1",
        port: Int = 1883,
        clientID: String,
        keepAlive: Int = 30,
        username: String? = nil,
        password: String? = nil,
        will: MQTTWill? = nil,
        cleanStart: Bool = true,
        sessionExpiry: UInt32 = 0,
        reconnectDelay: ClosedRange<Double> = 0.1...10,
        inflightMaximum: Int = 1000,
        tcpNoDelay: Bool = true,
        maxUnhandledMessages: Int? = nil,
        tls: MQTTTLSConfiguration? = nil,
        maximumPacketSize: Int? = nil
    ) {
        (self.host, self.port, self.clientID, self.keepAlive) = (host, port, clientID, keepAlive)
        (self.username, self.password, self.will, self.cleanStart) = (username, password, will, cleanStart)
        (self.sessionExpiry, self.reconnectDelay) = (sessionExpiry, reconnectDelay)
        (self.inflightMaximum, self.tcpNoDelay) = (inflightMaximum, tcpNoDelay)
        self.maxUnhandledMessages = maxUnhandledMessages.map { max(1, $0) }
        self.tls = tls
        // MQTT: at least 1 byte, at most what its four-byte integer holds (0 is a protocol error).
        self.maximumPacketSize = maximumPacketSize.map { min(max(1, $0), Int(UInt32.max)) }
    }

    /// The address as `host:port`, with brackets around an IPv6 address, for messages.
    var address: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

/// A change in the connection, for logging, metrics and health checks.
public enum MQTTConnectionEvent: Sendable, Hashable {
    /// Connected (again) and every kept subscription acknowledged by the broker, so messages
    /// published from now on reach this client; `sessionPresent` says whether the broker kept
    /// the previous session.
    case connected(sessionPresent: Bool)
    /// The connection was lost or closed; the reason is libmosquitto's text.
    case disconnected(reason: String)
    /// A connection attempt failed; another follows after `retryIn` seconds.
    case connectFailed(reason: String, retryIn: Double)
}
