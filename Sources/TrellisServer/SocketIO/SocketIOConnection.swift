import Foundation
import Synchronization
import TrellisCore
import TrellisSocketIO

/// One client's session with what its transports wait on: the pure ``EngineIOSession`` behind a
/// lock, and the tasks (a long poll, the WebSocket writer) waiting for packets to send.
final class SocketIOConnection: Sendable {
    /// The button service's id for this client: a new one per connection.
    let clientID: String
    /// The remote IP address the session was opened from, which its per-address limit counts.
    let address: String
    /// The handshake's `token` query parameter, for the press policy.
    let queryToken: String?
    /// The press token of the handshake's headers (`X-Trellis-Press-Token`, `Authorization: Bearer`).
    let headerToken: String?
    private let state: Mutex<State>

    private struct State {
        var session: EngineIOSession
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
        var pollInProgress = false
        var webSocketAttached = false
    }

    init(session: EngineIOSession, address: String, queryToken: String?, headerToken: String? = nil) {
        self.clientID = "socketio-" + session.id
        self.address = address
        self.queryToken = queryToken
        self.headerToken = headerToken
        self.state = Mutex(State(session: session))
    }

    var id: String { state.withLock { $0.session.id } }
    var version: EngineIOVersion { state.withLock { $0.session.version } }
    var limits: EngineIOLimits { state.withLock { $0.session.limits } }
    var transport: EngineIOSession.Transport { state.withLock { $0.session.transport } }
    var isClosed: Bool { state.withLock { $0.session.isClosed } }
    var closeReason: EngineIOSession.CloseReason? { state.withLock { $0.session.closeReason } }
    var connectAuth: JSONValue? { state.withLock { $0.session.connectAuth } }
    /// How long a poll may wait for packets now (``EngineIOSession/longPollWait``).
    var longPollWait: Double { state.withLock { $0.session.longPollWait } }

    /// Changes the session and wakes every waiting transport when packets or a close resulted.
    func update<T>(_ body: (inout EngineIOSession) -> T) -> T {
        let (result, wake) = state.withLock { state -> (T, [CheckedContinuation<Void, Never>]) in
            let result = body(&state.session)
            guard state.session.hasOutgoing || state.session.isClosed else { return (result, []) }
            let waiters = Array(state.waiters.values)
            state.waiters.removeAll()
            return (result, waiters)
        }
        for waiter in wake { waiter.resume() }
        return result
    }

    /// Claims the single long poll a session may have open; false when one is already open.
    func beginPoll() -> Bool {
        state.withLock { state in
            if state.pollInProgress { return false }
            state.pollInProgress = true
            return true
        }
    }

    /// Whether a long poll is open now.
    var pollInProgress: Bool { state.withLock { $0.pollInProgress } }

    func endPoll() {
        state.withLock { $0.pollInProgress = false }
    }

    /// Claims the session's WebSocket; false when it has one.
    func attachWebSocket() -> Bool {
        state.withLock { state in
            if state.webSocketAttached { return false }
            state.webSocketAttached = true
            return true
        }
    }

    /// Waits until packets are waiting or the session is closed, at most `timeout`.
    func waitForOutgoing(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.nextChange() }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns when packets are waiting or the session closed, or when the task is cancelled.
    private func nextChange() async {
        let ticket = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.session.hasOutgoing || state.session.isClosed || Task.isCancelled { return true }
                    state.waiters[ticket] = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: ticket) }?.resume()
        }
    }
}
