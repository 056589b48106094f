import TrellisCore

/// Timings and caps of one Engine.IO session.
public struct EngineIOLimits: Sendable, Equatable {
    /// Engine.IO 3: how often the client pings; Engine.IO 4: how often the server pings. Seconds.
    public var pingInterval: Double
    /// How long past an expected ping (3) or pong (4) the session is kept. Seconds.
    public var pingTimeout: Double
    /// Packets waiting for the client (a poll or the WebSocket); beyond, the session is closed.
    public var maximumBufferedPackets: Int
    /// Largest POST body or WebSocket message accepted, in bytes.
    public var maximumPayloadBytes: Int
    /// How long a session opened by a poll may go without a second request, and an upgrade
    /// between its probe and its `5`, before the session is closed. Seconds. A client polls again
    /// at once after its handshake, so only a client that opens sessions and leaves them (a page
    /// in a reconnect loop, a flood) reaches it; the full ping timeout would keep each one for
    /// over a minute.
    public var handshakeGrace: Double

    public init(
        pingInterval: Double, pingTimeout: Double, maximumBufferedPackets: Int = 256,
        maximumPayloadBytes: Int = 100_000,
        handshakeGrace: Double = 10
    ) {
        (self.pingInterval, self.pingTimeout) = (pingInterval, pingTimeout)
        (self.maximumBufferedPackets, self.maximumPayloadBytes) = (maximumBufferedPackets, maximumPayloadBytes)
        self.handshakeGrace = handshakeGrace
    }

    /// The defaults of each generation's reference server: socket.io 1.x (25 s, 60 s; the iOS client
    /// tolerates pingTimeout / pingInterval missed pongs) and socket.io 4 (25 s, 20 s).
    public static func defaults(_ version: EngineIOVersion) -> EngineIOLimits {
        switch version {
        case .v3: EngineIOLimits(pingInterval: 25, pingTimeout: 60)
        case .v4: EngineIOLimits(pingInterval: 25, pingTimeout: 20)
        }
    }
}

/// One client's Engine.IO session and its connection to the default Socket.IO namespace, as a
/// pure state machine: packets and the time go in; packets to send and what the application must
/// act on come out. The server owns the transports (long-polling requests, the WebSocket).
public struct EngineIOSession: Sendable {
    public enum Transport: String, Sendable { case polling, websocket }

    /// Why a session ended; the raw value labels the metric and the log line.
    public enum CloseReason: String, Sendable, Equatable {
        case clientClosed = "client_closed"
        case pingTimeout = "ping_timeout"
        case bufferFull = "buffer_full"
        case transportError = "transport_error"
        case serverShutdown = "server_shutdown"
        /// Opened by a poll and never heard from again within the grace period.
        case handshakeTimeout = "handshake_timeout"
        /// Answered an upgrade probe and never completed the upgrade within the grace period.
        case upgradeTimeout = "upgrade_timeout"
    }

    /// What the application acts on.
    public enum Input: Sendable, Equatable {
        /// The client joined the default namespace (unprompted in Engine.IO 3).
        case connected
        case event(name: String, arguments: [JSONValue])
        /// The client left the default namespace or the session ended.
        case disconnected
        /// A packet that was not understood; answered per protocol where it has an answer.
        case malformed(reason: String)
    }

    /// What one received packet leads to.
    public struct Reaction: Sendable, Equatable {
        public var inputs: [Input] = []
        /// Packets answered on the transport the packet came over, ahead of the queue (`3probe`).
        public var direct: [EngineIOPacket] = []
    }

    public let id: String
    public let socketID: String
    public let version: EngineIOVersion
    public let limits: EngineIOLimits
    public private(set) var transport: Transport
    /// The WebSocket answered the probe; the next `5` on it completes the upgrade.
    public private(set) var upgrading = false
    public private(set) var closeReason: CloseReason?
    /// Whether the client is in the default namespace.
    public private(set) var isConnected = false
    /// The `auth` object a Socket.IO 5 client sent with its CONNECT (`40{"token":…}`); nil when
    /// it sent none (and always in Engine.IO 3, whose clients have only the query string).
    public private(set) var connectAuth: JSONValue?
    private var outbox: [EngineIOPacket] = []
    /// When the session opened, until the client's second request confirms it (nil after).
    private var unconfirmedSince: Double?
    /// When the upgrade probe was answered, until the upgrade completes.
    private var upgradeSince: Double?
    private var lastHeard: Double
    private var nextPing: Double
    private var awaitingPongSince: Double?

    /// Opens a session: the open packet is queued, and in Engine.IO 3 the default namespace's `40`
    /// right behind it (with no payload: the socket.io-client-swift 6 parser breaks on one).
    /// Returns the session and, in Engine.IO 3, the `connected` input.
    public static func open(
        id: String, socketID: String, version: EngineIOVersion, transport: Transport,
        limits: EngineIOLimits, now: Double
    ) -> (EngineIOSession, [Input]) {
        var session = EngineIOSession(
            id: id, socketID: socketID, version: version, transport: transport, limits: limits, now: now)
        session.outbox.append(EngineIOPacket(.open, session.handshake))
        guard version == .v3 else { return (session, []) }
        session.outbox.append(EngineIOPacket(.message, SocketIOPacket(type: .connect).encoded))
        session.isConnected = true
        return (session, [.connected])
    }

    private init(
        id: String, socketID: String, version: EngineIOVersion, transport: Transport, limits: EngineIOLimits,
        now: Double
    ) {
        (self.id, self.socketID, self.version, self.transport) = (id, socketID, version, transport)
        self.limits = limits
        self.lastHeard = now
        self.nextPing = now + limits.pingInterval
        // A WebSocket handshake is its own confirmation: the client holds the transport open.
        self.unconfirmedSince = transport == .polling ? now : nil
    }

    /// The open packet's JSON.
    public var handshake: String {
        let upgrades = transport == .polling ? #"["websocket"]"# : "[]"
        var json =
            #"{"sid":\#(JSONText.string(id)),"upgrades":\#(upgrades),"pingInterval":\#(Int(limits.pingInterval * 1000)),"pingTimeout":\#(Int(limits.pingTimeout * 1000))"#
        if version == .v4 { json += #","maxPayload":\#(limits.maximumPayloadBytes)"# }
        return json + "}"
    }

    public var isClosed: Bool { closeReason != nil }

    /// Whether packets wait for the client.
    public var hasOutgoing: Bool { !outbox.isEmpty }

    /// Takes every packet waiting for the client.
    public mutating func drain() -> [EngineIOPacket] {
        defer { outbox.removeAll(keepingCapacity: true) }
        return outbox
    }

    /// A request of the client arrived (a poll, a POST): it is alive.
    public mutating func heard(now: Double) {
        lastHeard = now
        unconfirmedSince = nil
    }

    /// Queues an event for the client. False when the session is closed or not in the namespace;
    /// a queue over its cap closes the session (the client is not reading).
    @discardableResult
    public mutating func emit(_ name: String, argumentsJSON: [String]) -> Bool {
        guard !isClosed, isConnected else { return false }
        guard outbox.count < limits.maximumBufferedPackets else {
            _ = close(.bufferFull)
            return false
        }
        outbox.append(EngineIOPacket(.message, SocketIOPacket.event(name, argumentsJSON: argumentsJSON).encoded))
        return true
    }

    /// Ends the session from the server's side. Queues Engine.IO's `1` for a waiting poll; never
    /// Socket.IO's `41`, after which the P2O apps would not reconnect.
    public mutating func close(_ reason: CloseReason) -> [Input] {
        guard !isClosed else { return [] }
        closeReason = reason
        if reason != .clientClosed { outbox.append(EngineIOPacket(.close)) }
        guard isConnected else { return [] }
        isConnected = false
        return [.disconnected]
    }

    /// Checks the heartbeat: closes a session not heard from in time, and in Engine.IO 4 queues the
    /// server's ping when one is due.
    public mutating func tick(now: Double) -> [Input] {
        guard !isClosed else { return [] }
        if let since = unconfirmedSince, now - since > limits.handshakeGrace { return close(.handshakeTimeout) }
        if let since = upgradeSince, now - since > limits.handshakeGrace { return close(.upgradeTimeout) }
        switch version {
        case .v3:
            if now - lastHeard > limits.pingInterval + limits.pingTimeout { return close(.pingTimeout) }
        case .v4:
            if let sent = awaitingPongSince {
                if now - sent > limits.pingTimeout { return close(.pingTimeout) }
            } else if now >= nextPing {
                outbox.append(EngineIOPacket(.ping))
                awaitingPongSince = now
                nextPing = now + limits.pingInterval
            }
        }
        return []
    }

    /// The earliest time ``tick(now:)`` has something to do.
    public var nextDeadline: Double {
        let heartbeat =
            switch version {
            case .v3: lastHeard + limits.pingInterval + limits.pingTimeout
            case .v4: awaitingPongSince.map { $0 + limits.pingTimeout } ?? nextPing
            }
        let grace = [unconfirmedSince, upgradeSince].compactMap { $0.map { $0 + limits.handshakeGrace } }
        return ([heartbeat] + grace).min() ?? heartbeat
    }

    /// Handles one packet from the client, received over `via`.
    public mutating func receive(_ packet: EngineIOPacket, via: Transport, now: Double) -> Reaction {
        var reaction = Reaction()
        guard !isClosed else { return reaction }
        heard(now: now)
        switch packet.type {
        case .ping:
            if packet.text == "probe" {
                // One probe per upgrade: a repeated one would restart the upgrade's grace, and keep
                // the session's polls answered at once (``longPollWait``), for as long as it came.
                guard via == .websocket, transport == .polling, !upgrading else {
                    reaction.inputs.append(.malformed(reason: "unexpected_probe"))
                    return reaction
                }
                upgrading = true
                upgradeSince = now
                reaction.direct.append(EngineIOPacket(.pong, "probe"))
                // Makes a waiting poll return, so the client can pause polling and send `5`.
                outbox.append(EngineIOPacket(.noop))
            } else {
                reaction.inputs += enqueueControl(EngineIOPacket(.pong, packet.text ?? ""))
            }
        case .pong:
            if packet.text != "probe" { awaitingPongSince = nil }
        case .upgrade:
            if upgrading, via == .websocket {
                upgrading = false
                upgradeSince = nil
                transport = .websocket
            } else {
                reaction.inputs.append(.malformed(reason: "unexpected_upgrade"))
            }
        case .close:
            reaction.inputs += close(.clientClosed)
        case .noop:
            break
        case .open:
            reaction.inputs.append(.malformed(reason: "unexpected_open"))
        case .message:
            reaction.inputs += receiveMessage(packet)
        }
        return reaction
    }

    private mutating func receiveMessage(_ packet: EngineIOPacket) -> [Input] {
        guard let text = packet.text else { return [.malformed(reason: "binary_message")] }
        let decoded: SocketIOPacket
        switch SocketIOPacket.decode(text) {
        case let .success(value): decoded = value
        case let .failure(error): return [.malformed(reason: error.rawValue)]
        }
        guard decoded.namespace == "/" else {
            let refused = decoded.type == .connect ? refuseNamespace(decoded.namespace) : []
            return [.malformed(reason: "unknown_namespace")] + refused
        }
        switch decoded.type {
        case .connect:
            guard !isConnected else { return [] }
            isConnected = true
            guard version == .v4 else { return [.connected] }
            connectAuth = decoded.data.isEmpty ? nil : JSONValue.parse(decoded.data)
            let answer = SocketIOPacket(type: .connect, data: #"{"sid":\#(JSONText.string(socketID))}"#)
            return [.connected] + enqueueControl(EngineIOPacket(.message, answer.encoded))
        case .disconnect:
            guard isConnected else { return [] }
            isConnected = false
            return [.disconnected]
        case .event:
            guard isConnected else { return [.malformed(reason: "event_before_connect")] }
            switch decoded.event() {
            case let .success(event): return [.event(name: event.name, arguments: event.arguments)]
            case let .failure(error): return [.malformed(reason: error.rawValue)]
            }
        case .ack, .connectError, .binaryEvent, .binaryAck:
            return [.malformed(reason: "unsupported_packet")]
        }
    }

    /// Answers a connect to a namespace the server does not have, in the generation's words.
    private mutating func refuseNamespace(_ namespace: String) -> [Input] {
        let data = version == .v3 ? JSONText.string("Invalid namespace") : #"{"message":"Invalid namespace"}"#
        return enqueueControl(
            EngineIOPacket(.message, SocketIOPacket(type: .connectError, namespace: namespace, data: data).encoded))
    }

    /// Queues an answer the protocol owes; a client that floods with requests it never reads the
    /// answers of fills the queue and is closed like any other.
    private mutating func enqueueControl(_ packet: EngineIOPacket) -> [Input] {
        guard outbox.count < limits.maximumBufferedPackets else { return close(.bufferFull) }
        outbox.append(packet)
        return []
    }
}
