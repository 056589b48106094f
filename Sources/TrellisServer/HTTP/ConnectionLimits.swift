/// How long a connection to one of Trellis's HTTP servers may take and how many may be open: what
/// keeps a client that opens connections and sends nothing (or a byte now and then), or a request
/// head without its body, from holding descriptors for ever. Each server has its own
/// ``maximumConnections``.
public struct ConnectionLimits: Sendable, Equatable {
    /// Seconds from a connection's opening until its first request head is complete; a connection
    /// still without one is closed (`header_timeout`).
    public var headerTimeout: Double
    /// Seconds from a request's head until its body is complete, however the body comes (a byte a
    /// second is no better than nothing); a connection whose body is late is closed (`body_timeout`).
    public var bodyTimeout: Double
    /// Seconds a kept-alive connection may go without a request part read or a response written
    /// (Hummingbird's own idle handler); a request in progress, such as a long poll waiting for
    /// packets, is never cut, and an upgraded WebSocket keeps Engine.IO's ping rules instead.
    public var idleTimeout: Double
    /// Connections open at once. Beyond it, a new connection takes the place of the one that has
    /// waited longest for a request (`evicted`): its first head, or the rest of a body. When every
    /// connection has its request whole (requests in progress, long polls, WebSockets, kept-alive
    /// ones), the new one is closed at once (`over_capacity`).
    public var maximumConnections: Int

    /// The probes' and the metrics' defaults: a probe or a scrape sends its request at once, and a
    /// few dozen connections are more than a kubelet, a Prometheus and an operator need.
    public static let probes = ConnectionLimits(
        headerTimeout: 10, bodyTimeout: 10, idleTimeout: 60, maximumConnections: 64)
    /// The Socket.IO endpoint's defaults: each session holds one connection (two during a POST), and
    /// 512 serve a household's apps many times over, while the three servers' caps together (640)
    /// stay inside the usual 1,024 descriptors with room for the broker, the store and the logs. A
    /// POST carries at most 100 kB of packets: 10 s allows 10 kB/s.
    public static let socketIO = ConnectionLimits(
        headerTimeout: 10, bodyTimeout: 10, idleTimeout: 60, maximumConnections: 512)

    public init(headerTimeout: Double, bodyTimeout: Double, idleTimeout: Double, maximumConnections: Int) {
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.idleTimeout = idleTimeout
        self.maximumConnections = maximumConnections
    }
}
