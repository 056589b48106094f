import _ConnectionPoolModule
import Foundation
import PostgresNIO
import TrellisCore
import TrellisStore

/// Turns postgres-nio's errors into ``StoreError`` with words a user can act on.
///
/// `PSQLError`'s own description is deliberately opaque (it hides the query and its values); this
/// keeps that promise but adds what is safe and useful: the server's SQLSTATE and message for a
/// failed statement, or what went wrong with the connection. Values bound to a query, and the
/// password, never appear.
enum PostgresFailure {
    /// SQLSTATEs after which the whole transaction is simply run again: deadlock detected and
    /// serialization failure.
    static let retryableStates: Set<String> = ["40P01", "40001"]

    /// True when `error` is a deadlock or serialization failure.
    static func isRetryable(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, let state = error.serverInfo?[.sqlState] else { return false }
        return retryableStates.contains(state)
    }

    /// True when `error` says that the connection a statement used has closed (the server ended the
    /// session, or the connection was found closed), as opposed to a server that cannot be reached:
    /// worth trying again at once on another connection.
    static func isConnectionLoss(_ error: any Error) -> Bool {
        if let abandoned = error as? StatementAbandoned, case .connectionClosed = abandoned.reason { return true }
        guard let error = error as? PSQLError else { return false }
        // 57P01: the server shut down; 25P03: it ended a session idle in its transaction past
        // `idle_in_transaction_session_timeout` (rolled back, ``PostgresStore/idleInTransactionLimit``).
        if let state = error.serverInfo?[.sqlState] { return state == "57P01" || state == "25P03" }
        return [.serverClosedConnection, .clientClosedConnection, .uncleanShutdown].contains(error.code)
    }

    /// SQLSTATEs of a server that is going away or not there yet, or out of resources for a
    /// moment: class 08 (connection exceptions) is matched by its prefix besides these.
    /// 57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now (starting up),
    /// 53100 disk full, 53200 out of memory, 53300 too many connections, 25P03 a session ended idle
    /// in its transaction (a process held past the limit), and the two the transaction retry gives
    /// up on when they keep coming.
    static let transientStates: Set<String> = [
        "57P01", "57P02", "57P03", "53100", "53200", "53300", "25P03", "40001", "40P01"
    ]

    /// True when `error` passes without the request changing: a lost or refused connection, a
    /// server shutting down or starting, the pool unable to connect, or one of ``transientStates``.
    /// Not our own closing of the pool or connection.
    static func isTransient(_ error: any Error) -> Bool {
        if let pool = error as? ConnectionPoolError { return pool == .connectionCreationCircuitBreakerTripped }
        if error is StatementAbandoned || error is CommitOutcomeUnknown { return true }
        guard let error = error as? PSQLError else { return false }
        if let state = error.serverInfo?[.sqlState] { return state.hasPrefix("08") || transientStates.contains(state) }
        // A connection closed by the client is one the pool closed after its server went away (an idle
        // connection told 57P01): the store's own closing is checked before any retry.
        return [.connectionError, .serverClosedConnection, .uncleanShutdown, .clientClosedConnection].contains(
            error.code)
    }

    /// `error` as a ``StoreError`` for `operation`, whose underlying error is a ``PostgresProblem``.
    static func wrap(_ error: any Error, operation: String) -> StoreError {
        if let error = error as? StoreError { return error }
        return StoreError(
            code: .operationFailed, message: "\(operation) failed",
            underlying: PostgresProblem(
                kind: kind(of: error), description: describe(error),
                transient: isTransient(error)))
    }

    /// A short name for the kind of failure, for the metrics' and health's `kind`:
    /// `SQLSTATE_<code>` for a refused statement, `POSTGRES_CONNECTION` for a connection problem.
    static func kind(of error: any Error) -> String {
        if error is ConnectionPoolError || error is StatementAbandoned || error is CommitOutcomeUnknown {
            return "POSTGRES_CONNECTION"
        }
        guard let error = error as? PSQLError else { return "other" }
        if let state = error.serverInfo?[.sqlState] { return "SQLSTATE_\(state)" }
        return "POSTGRES_CONNECTION"
    }

    /// One line about `error`: `SQLSTATE 23505: duplicate key value ...`, or the connection problem.
    static func describe(_ error: any Error) -> String {
        if let store = error as? StoreError { return store.message }
        if let pool = error as? ConnectionPoolError, pool == .connectionCreationCircuitBreakerTripped {
            return "cannot connect to the server: every new connection has failed for a while"
        }
        guard let error = error as? PSQLError else { return String(describing: error) }
        if let info = error.serverInfo {
            let state = info[.sqlState].map { "SQLSTATE \($0): " } ?? ""
            return state + (info[.message] ?? "the server refused the statement")
        }
        switch error.code {
        case .connectionError:
            let cause = error.underlying.map { ": \($0)" } ?? ""
            return "cannot connect to the server\(cause)"
        case .serverClosedConnection, .uncleanShutdown:
            return "the server closed the connection"
        case .sslUnsupported:
            return "the server does not offer TLS (sslmode=require or verify-full asks for it)"
        case .authMechanismRequiresPassword:
            return "the server asks for a password and the store URL has none"
        case .poolClosed:
            return "the store is closed"
        case .clientClosedConnection:
            return "the connection was closed"
        case .queryCancelled:
            return "the statement was cancelled"
        default:
            let cause = error.underlying.map { ": \($0)" } ?? ""
            return "PostgreSQL error \(error.code)\(cause)"
        }
    }
}

/// A PostgreSQL failure in words that are safe to log (no bound values, no password).
struct PostgresProblem: StoreFailureCause, Sendable, CustomStringConvertible {
    /// See ``PostgresFailure/kind(of:)``.
    let kind: String
    /// See ``PostgresFailure/describe(_:)``.
    let description: String
    /// See ``PostgresFailure/isTransient(_:)``.
    var transient = false

    var summary: String { description }
    var causeText: String { description }
    var isTransient: Bool { transient }
    /// A store that cannot be opened for a transient reason could not reach its server.
    var isServerUnavailable: Bool { transient }
}

extension PostgresConnection {
    /// Every value of the first column of `query`'s rows.
    func values<T: PostgresDecodable & Sendable>(_ query: PostgresQuery, as type: T.Type = T.self, logger: Logger)
        async throws -> [T]
    {
        var values: [T] = []
        for try await value in try await self.query(query, logger: logger).decode(T.self) { values.append(value) }
        return values
    }

    /// Every row of `query`'s result (for counting rows a `RETURNING` gave).
    func rows(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        let sequence: PostgresRowSequence = try await self.query(query, logger: logger)
        return try await sequence.collect()
    }
}
