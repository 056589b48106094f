import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import TrellisRelay
import TrellisSocketIO

/// Every open Socket.IO session, capped at `maximumSessions`; as a service, the sweeper that ticks
/// each session's heartbeat once a second and ends sessions when Trellis stops.
final class SocketIOSessions: Service, Sendable {
    let buttons: SocketIOButtons
    let metrics = SocketIOMetrics()
    let maximumSessions: Int
    private let logger: Logger
    private let connections = Mutex<[String: SocketIOConnection]>([:])
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant

    init(relay: RelayService, maximumSessions: Int, logger: Logger) {
        self.buttons = SocketIOButtons(relay: relay, logger: logger)
        self.maximumSessions = maximumSessions
        self.logger = logger
        self.started = clock.now
    }

    /// Seconds on a monotonic clock, the time the sessions' state machines run on.
    var now: Double {
        let elapsed = clock.now - started
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }

    var isFull: Bool { connections.withLock { $0.count } >= maximumSessions }

    func find(_ sid: String) -> SocketIOConnection? {
        connections.withLock { $0[sid] }
    }

    /// Opens a session (refused when full) and, in Engine.IO 3, joins it to the button service
    /// before the handshake is answered, so `connection-response` follows the open packet.
    func open(version: EngineIOVersion, transport: EngineIOSession.Transport) async -> Result<SocketIOConnection, SocketIOServer.Refusal> {
        let (session, inputs) = EngineIOSession.open(id: Self.newID(), socketID: Self.newID(), version: version,
                                                     transport: transport, limits: .defaults(version), now: now)
        let connection = SocketIOConnection(session: session)
        let added = connections.withLock { connections -> Bool in
            guard connections.count < maximumSessions else { return false }
            connections[session.id] = connection
            return true
        }
        guard added else { return .failure(.full) }
        metrics.opened(version: version, sessions: connections.withLock { $0.count })
        logger.debug("Socket.IO session opened", metadata: ["sid": "\(session.id)", "protocol": "\(version)", "transport": "\(transport.rawValue)"])
        await handle(inputs, on: connection)
        return .success(connection)
    }

    /// Feeds one packet to a session and acts on what it leads to; returns the direct answers.
    func receive(_ packet: EngineIOPacket, via transport: EngineIOSession.Transport, on connection: SocketIOConnection) async -> [EngineIOPacket] {
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
        let removed = connections.withLock { $0.removeValue(forKey: connection.id) != nil }
        guard removed else { return }
        let reason = connection.closeReason ?? .transportError
        metrics.closed(reason: reason.rawValue, sessions: connections.withLock { $0.count })
        logger.debug("Socket.IO session closed", metadata: ["sid": "\(connection.id)", "reason": "\(reason.rawValue)"])
    }

    private func handle(_ inputs: [EngineIOSession.Input], on connection: SocketIOConnection) async {
        for input in inputs {
            if case let .malformed(reason) = input { metrics.malformed(reason) }
            await buttons.handle(input, on: connection)
        }
    }

    func run() async throws {
        for await _ in AsyncTimerSequence.every(.seconds(1)).cancelOnGracefulShutdown() {
            let current = connections.withLock { Array($0.values) }
            let time = now
            for connection in current {
                let inputs = connection.update { $0.tick(now: time) }
                if !inputs.isEmpty || connection.isClosed {
                    await handle(inputs, on: connection)
                    remove(connection)
                }
            }
        }
        for connection in connections.withLock({ Array($0.values) }) {
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
