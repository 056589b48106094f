import NIOCore
import PostgresNIO
import Synchronization

/// Statements on one connection that cannot wait forever: the work ends with an error when the
/// connection closes under it, or when it runs past its limit.
///
/// Why: postgres-nio 1.33 writes each statement to its channel without a promise, so a statement
/// sent on a connection the server has just closed (a fast shutdown's 57P01 lands between a
/// transaction's statements, or the pool hands out a connection whose close it has not seen yet)
/// is dropped without its caller ever hearing back. That left a relay's message handling waiting
/// forever after PostgreSQL came back. And a connection cut off by the network (no FIN, no RST)
/// keeps a statement waiting for TCP's retransmissions to give up, many minutes later.
///
/// The work runs in a task of its own, raced against the connection's close and a timer on its
/// event loop. A close is given a short grace, so that work whose answer had already arrived
/// finishes with it (a COMMIT that succeeded is not reported failed). Past the limit the
/// connection is closed, so the pool opens a new one and nothing else is sent on it. Both
/// outcomes are ``StatementAbandoned``, a failure that passes: the store's retries take over. A
/// task whose statement was dropped stays suspended; one is left behind per such loss. The cost
/// per statement is one task, one timer and two uncontended locks.
enum BoundedStatements {
    /// How long a statement's work may run on one connection before it is abandoned.
    static let limit: Duration = .seconds(10)
    /// How long work may still finish after its connection closed.
    static let closeGrace: TimeAmount = .milliseconds(500)

    /// Runs `body` on `connection`, throwing ``StatementAbandoned`` when the connection closes
    /// under it (after ``closeGrace``) or it runs longer than `limit`. The work runs in a task of its
    /// own, which prefers `executor` when given. Once `commit` has begun, a close no longer abandons
    /// the work (only the limit does).
    static func run<T: Sendable>(
        on connection: PostgresConnection, within limit: Duration = limit, executor: (any TaskExecutor)? = nil,
        commit: CommitPhase? = nil, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        // A connection known closed fails at once, without a task or the close's grace.
        if connection.isClosed { throw StatementAbandoned(reason: .connectionClosed) }
        let outcome = Outcome<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                outcome.wait(continuation)
                let eventLoop = connection.eventLoop
                let timer = Self.abandon(
                    on: connection, after: limit, unless: outcome, probingOn: executor)
                let watched = CloseWatch.shared.add(connection) {
                    eventLoop.scheduleTask(in: closeGrace) {
                        // A COMMIT written while the connection was open is answered or failed by postgres-nio
                        // itself; abandoning it here would make a commit that took effect look failed.
                        guard commit?.began != true else { return }
                        _ = outcome.finish(.failure(StatementAbandoned(reason: .connectionClosed)))
                    }
                }
                outcome.started(
                    Task(executorPreference: executor) {
                        let result: Result<T, any Error>
                        do {
                            result = .success(try await body(connection))
                        } catch {
                            result = .failure(error)
                        }
                        timer.cancel()
                        CloseWatch.shared.remove(watched, of: connection)
                        _ = outcome.finish(result)
                    })
            }
        } onCancel: {
            outcome.cancel()
        }
    }

    /// How late a probe of the work's executor may start for the process to count as running: a
    /// probe later than this means the work could not have run either.
    static let starved: Duration = .seconds(1)
    /// How many times a late probe may start the timer over: a process starved for longer than
    /// that many limits gives the statement up all the same, so nothing waits without end.
    static let restarts = 3

    /// Schedules the end of the work at `limit` on the connection's event loop, unless `outcome`
    /// came first. The limit is meant for a server that does not answer, not for a process that
    /// could not run: the answer may be in, with the work's task waiting for a thread of an executor
    /// held by other work (two cores, each busy with a long computation). So when the timer fires,
    /// a probe is started on the work's executor; if it starts at once, the executor is free and the
    /// work still waits on the server, and the connection is closed. If it starts late (past
    /// ``starved``), the work queued before it has just had its turn, and the timer starts over, at
    /// most ``restarts`` times.
    private static func abandon<T: Sendable>(
        on connection: PostgresConnection, after limit: Duration, unless outcome: Outcome<T>,
        probingOn executor: (any TaskExecutor)?, restarts: Int = restarts
    ) -> Scheduled<Void> {
        connection.eventLoop.scheduleTask(in: .nanoseconds(Int64(limit / .nanoseconds(1)))) {
            guard !outcome.isFinished else { return }
            let asked = ContinuousClock.now
            Task(executorPreference: executor) {
                guard restarts == 0 || ContinuousClock.now - asked <= starved else {
                    _ = abandon(
                        on: connection, after: limit, unless: outcome, probingOn: executor, restarts: restarts - 1)
                    return
                }
                guard outcome.finish(.failure(StatementAbandoned(reason: .timedOut(limit)))) else { return }
                // Kept until closed: a connection must not be released before its close is done.
                (connection.close() as EventLoopFuture<Void>).whenComplete { _ in
                    withExtendedLifetime(connection) {}
                }
            }
        }
    }

    /// The one outcome of a bounded run: the first of the work, the close and the timer.
    private final class Outcome<T: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<T, any Error>?
            var work: Task<Void, Never>?
            var cancelled = false
            var finished = false
        }

        private let state = Mutex(State())

        var isFinished: Bool { state.withLock(\.finished) }

        func wait(_ continuation: CheckedContinuation<T, any Error>) {
            state.withLock { $0.continuation = continuation }
        }

        /// The task doing the work, cancelled with the caller.
        func started(_ work: Task<Void, Never>) {
            let cancelled = state.withLock { state in
                state.work = work
                return state.cancelled
            }
            if cancelled { work.cancel() }
        }

        func cancel() {
            let work = state.withLock { state in
                state.cancelled = true
                return state.work
            }
            work?.cancel()
        }

        /// Resumes the caller with `result` unless another outcome came first; true when this one did.
        func finish(_ result: Result<T, any Error>) -> Bool {
            let continuation = state.withLock { state -> CheckedContinuation<T, any Error>? in
                guard !state.finished else { return nil }
                state.finished = true
                defer {
                    state.continuation = nil
                    state.work = nil
                }
                return state.continuation
            }
            continuation?.resume(with: result)
            return continuation != nil
        }
    }
}

/// The bounded runs in flight on each connection, told when it closes: one callback on each
/// connection's close rather than one per statement, which a long-lived connection would pile up.
private final class CloseWatch: Sendable {
    static let shared = CloseWatch()

    private struct Watched {
        /// Held until it closes, so that its address is not taken by another connection meanwhile.
        let connection: PostgresConnection
        var next = 0
        var waiting: [Int: @Sendable () -> Void] = [:]
    }

    private let state = Mutex<[ObjectIdentifier: Watched]>([:])

    /// Calls `closed` once `connection` closes (soon, when it has closed already), unless
    /// ``remove(_:of:)`` comes first; returns the ticket for that.
    func add(_ connection: PostgresConnection, _ closed: @escaping @Sendable () -> Void) -> Int {
        let key = ObjectIdentifier(connection)
        let (ticket, first) = state.withLock { all -> (Int, Bool) in
            let first = all[key] == nil
            var watched = all[key] ?? Watched(connection: connection)
            let ticket = watched.next
            watched.next += 1
            watched.waiting[ticket] = closed
            all[key] = watched
            return (ticket, first)
        }
        if first {
            connection.closeFuture.whenComplete { _ in
                let waiting = self.state.withLock { all in
                    all.removeValue(forKey: key).map { Array($0.waiting.values) } ?? []
                }
                for closed in waiting { closed() }
            }
        }
        return ticket
    }

    func remove(_ ticket: Int, of connection: PostgresConnection) {
        _ = state.withLock { all in all[ObjectIdentifier(connection)]?.waiting.removeValue(forKey: ticket) }
    }
}

/// A statement given up on: its connection closed under it, or it ran past its limit (the connection
/// is then closed). In a transaction, either before its COMMIT: nothing took effect. A failure during the
/// COMMIT is ``CommitOutcomeUnknown`` instead.
struct StatementAbandoned: Error, CustomStringConvertible {
    enum Reason: Sendable {
        case connectionClosed
        case timedOut(Duration)
    }

    let reason: Reason

    var description: String {
        switch reason {
        case .connectionClosed: "the connection to the server closed under a statement"
        case let .timedOut(limit): "no answer from the server within \(limit); the connection was closed"
        }
    }
}

/// Whether a transaction has sent its COMMIT: past that point a lost connection leaves its outcome unknown.
final class CommitPhase: Sendable {
    private let sent = Atomic<Bool>(false)

    var began: Bool { sent.load(ordering: .acquiring) }

    func begin() { sent.store(true, ordering: .releasing) }

    /// What a COMMIT's failure means: a refusal from the server (a deferred constraint, a serialization
    /// failure) is definite, nothing was committed; a lost connection or a COMMIT past its limit leaves the
    /// outcome unknown.
    static func outcome(of error: any Error) -> any Error {
        if let error = error as? PSQLError, let state = error.serverInfo?[.sqlState], !state.hasPrefix("57P"),
            !state.hasPrefix("08")
        {
            return error
        }
        return CommitOutcomeUnknown(underlying: error)
    }
}

/// A transaction's COMMIT was sent and its answer lost with the connection: it may or may not have taken
/// effect. A failure that passes. Work that is retried keeps the transaction in an ``UnresolvedCommit`` and
/// finds out what became of it before running again; other work is not run again at once.
struct CommitOutcomeUnknown: Error, CustomStringConvertible {
    let underlying: any Error

    var description: String { "the connection was lost during a COMMIT, whose outcome is unknown (\(underlying))" }
}
