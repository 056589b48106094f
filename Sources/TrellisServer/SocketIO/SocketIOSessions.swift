import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import TrellisRelay
import TrellisSocketIO

/// What the endpoint allows: how many sessions, how many from one address, who may press, which
/// web pages may connect, and how many connections and for how long.
public struct SocketIOSettings: Sendable {
    public var maximumSessions = 10_000
    /// Sessions one remote address may hold at once, so that one page or host cannot take the
    /// whole table; 0: no limit (behind a reverse proxy every client has the proxy's address).
    public var maximumSessionsPerAddress = 100
    public var presses = SocketIOPressPolicy.off
    /// The pages that may connect (`buttons.socketio_allowed_origins`).
    public var origins = OriginPolicy.ownOnly
    public var connections = ConnectionLimits.socketIO

    public init(
        maximumSessions: Int = 10_000, maximumSessionsPerAddress: Int = 100, presses: SocketIOPressPolicy = .off,
        origins: OriginPolicy = .ownOnly, connections: ConnectionLimits = .socketIO
    ) {
        (self.maximumSessions, self.maximumSessionsPerAddress) = (maximumSessions, maximumSessionsPerAddress)
        (self.presses, self.origins, self.connections) = (presses, origins, connections)
    }
}

/// Every open Socket.IO session, capped at `maximumSessions` in all and
/// `maximumSessionsPerAddress` per remote address; as a service, the sweeper that ticks each
/// session's heartbeat once a second (closing sessions left after their handshake) and ends
/// sessions when Trellis stops.
final class SocketIOSessions: Service, Sendable {
    let buttons: SocketIOButtons
    let metrics = SocketIOMetrics()
    let settings: SocketIOSettings
    private let logger: Logger
    private let table = Mutex(Table())
    private let refusals = Mutex(RefusalReport())
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant

    /// The sessions, and how many each remote address holds.
    private struct Table {
        var connections: [String: SocketIOConnection] = [:]
        var perAddress: [String: Int] = [:]
    }

    init(relay: RelayService, settings: SocketIOSettings, logger: Logger) {
        self.buttons = SocketIOButtons(relay: relay, presses: settings.presses, metrics: metrics, logger: logger)
        self.settings = settings
        self.logger = logger
        self.started = clock.now
    }

    /// Seconds on a monotonic clock, the time the sessions' state machines run on.
    var now: Double {
        let elapsed = clock.now - started
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }

    var count: Int { table.withLock { $0.connections.count } }

    func find(_ sid: String) -> SocketIOConnection? {
        table.withLock { $0.connections[sid] }
    }

    /// Whether a new session from `address` would be refused, and why.
    func admission(from address: String) -> SocketIOServer.Refusal? {
        let refusal = table.withLock { Self.admission(for: address, in: $0, settings) }
        if let refusal { refused(refusal, address: address) }
        return refusal
    }

    private static func admission(for address: String, in table: Table, _ settings: SocketIOSettings) -> SocketIOServer
        .Refusal?
    {
        if table.connections.count >= settings.maximumSessions { return .full }
        let limit = settings.maximumSessionsPerAddress
        if limit > 0, table.perAddress[address, default: 0] >= limit { return .addressLimit }
        return nil
    }

    /// Opens a session for a handshake from `address` (refused when the table or the address is
    /// full) and, in Engine.IO 3, joins it to the button service before the handshake is answered,
    /// so `connection-response` follows the open packet. `token` is the handshake's `token` query
    /// parameter, `headerToken` the press token of its headers.
    func open(
        version: EngineIOVersion, transport: EngineIOSession.Transport, address: String,
        token: String?, headerToken: String? = nil
    ) async -> Result<SocketIOConnection, SocketIOServer.Refusal> {
        let (session, inputs) = EngineIOSession.open(
            id: Self.newID(), socketID: Self.newID(), version: version,
            transport: transport, limits: .defaults(version), now: now)
        let connection = SocketIOConnection(
            session: session, address: address, queryToken: token, headerToken: headerToken)
        let (refusal, count) = table.withLock { table -> (SocketIOServer.Refusal?, Int) in
            if let refusal = Self.admission(for: address, in: table, settings) {
                return (refusal, table.connections.count)
            }
            table.connections[session.id] = connection
            table.perAddress[address, default: 0] += 1
            return (nil, table.connections.count)
        }
        if let refusal {
            refused(refusal, address: address)
            return .failure(refusal)
        }
        metrics.opened(version: version, sessions: count)
        logger.debug(
            "Socket.IO session opened",
            metadata: ["sid": "\(session.id)", "protocol": "\(version)", "transport": "\(transport.rawValue)"])
        await handle(inputs, on: connection)
        return .success(connection)
    }

    /// Feeds one packet to a session and acts on what it leads to; returns the direct answers.
    func receive(_ packet: EngineIOPacket, via transport: EngineIOSession.Transport, on connection: SocketIOConnection)
        async -> [EngineIOPacket]
    {
        let reaction = connection.update { $0.receive(packet, via: transport, now: now) }
        await handle(reaction.inputs, on: connection)
        if connection.isClosed { remove(connection) }
        return reaction.direct
    }

    /// Ends a session from the server's side.
    func close(_ connection: SocketIOConnection, _ reason: EngineIOSession.CloseReason) async {
        let inputs = connection.update { $0.close(reason) }
        await handle(inputs, on: connection)
        remove(connection)
    }

    private func remove(_ connection: SocketIOConnection) {
        let count = table.withLock { table -> Int? in
            guard table.connections.removeValue(forKey: connection.id) != nil else { return nil }
            let left = table.perAddress[connection.address, default: 1] - 1
            table.perAddress[connection.address] = left > 0 ? left : nil
            return table.connections.count
        }
        guard let count else { return }
        let reason = connection.closeReason ?? .transportError
        metrics.closed(reason: reason.rawValue, sessions: count)
        logger.debug("Socket.IO session closed", metadata: ["sid": "\(connection.id)", "reason": "\(reason.rawValue)"])
    }

    private func handle(_ inputs: [EngineIOSession.Input], on connection: SocketIOConnection) async {
        for input in inputs {
            if case let .malformed(reason) = input {
                metrics.malformed(reason)
                logger.debug(
                    "Socket.IO packet not understood", metadata: ["sid": "\(connection.id)", "reason": "\(reason)"])
            }
            await buttons.handle(input, on: connection)
        }
    }

    /// Counts a refused handshake and logs it, at most once per address and minute.
    private func refused(_ refusal: SocketIOServer.Refusal, address: String) {
        let time = now
        guard let refusals = refusals.withLock({ $0.record(address, now: time) }) else { return }
        let limit = refusal == .full ? settings.maximumSessions : settings.maximumSessionsPerAddress
        logger.warning(
            "Socket.IO handshakes refused",
            metadata: [
                "address": "\(address)", "reason": "\(refusal.label)", "limit": "\(limit)",
                "refused": "\(refusals)", "sessions": "\(count)"
            ])
    }

    func run() async throws {
        for await _ in AsyncTimerSequence.every(.seconds(1)).cancelOnGracefulShutdown() {
            let current = table.withLock { Array($0.connections.values) }
            let time = now
            for connection in current {
                let inputs = connection.update { $0.tick(now: time) }
                if !inputs.isEmpty || connection.isClosed {
                    await handle(inputs, on: connection)
                    remove(connection)
                }
            }
        }
        for connection in table.withLock({ Array($0.connections.values) }) {
            await close(connection, .serverShutdown)
        }
    }

    /// 20 random characters of the URL-safe base64 alphabet (120 bits).
    static func newID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var generator = SystemRandomNumberGenerator()
        return String((0..<20).map { _ in alphabet[Int(generator.next(upperBound: UInt8(64)))] })
    }
}

/// A timer as an async sequence: one element per period.
struct AsyncTimerSequence: AsyncSequence, Sendable {
    typealias Element = Void
    let period: Duration

    static func every(_ period: Duration) -> AsyncTimerSequence { AsyncTimerSequence(period: period) }

    struct AsyncIterator: AsyncIteratorProtocol {
        let period: Duration
        mutating func next() async -> Void? {
            do {
                try await Task.sleep(for: period)
                return ()
            } catch {
                return nil
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(period: period) }
}
