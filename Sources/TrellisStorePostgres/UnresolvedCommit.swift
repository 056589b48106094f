import Logging
import PostgresNIO
import Synchronization

/// A transaction whose COMMIT was sent and whose answer was lost, found out before the work runs again.
///
/// **Why.** A connection lost during a COMMIT (the server killed, the network cut, the statement past its limit)
/// leaves the outcome unknown: the server may have committed. Work that is retried (a batch written behind, a
/// handled message's transaction waiting out an outage) would then take effect twice: a run of readings stored
/// twice, a press counted twice.
///
/// **How.** Just before its COMMIT, a transaction given one of these reads its id
/// (`pg_current_xact_id_if_assigned()`, none when it wrote nothing) and leaves it here with the result its body
/// computed. When the outcome is lost, the next attempt of the same work first asks the server what became of that
/// transaction (`pg_xact_status`, which survives a crash of the server: a transaction in progress then is aborted):
/// - `committed`: the work is done; the kept result is returned and nothing runs again;
/// - `aborted`, or no id (it wrote nothing): nothing took effect; the work runs again;
/// - `in progress`: the server is still at it; asked again after a pause.
///
/// **Attempts.** Each attempt takes a number (``begin()``); a record is taken only from the attempt in hand, so the
/// task of an attempt given up on (``BoundedStatements`` leaves it running when its limit passes) cannot replace or
/// clear what a later attempt relies on. Only the caller's loop clears it, once the outcome is known.
///
/// **The limit of it.** The id names a transaction in one server's history. After a failover to a replica that had
/// not received the transaction, the new primary may give the same id to another transaction, and the lost one is
/// then taken for committed: its batch is not written again. A failover to an asynchronous replica loses commits
/// that were acknowledged anyway; this adds the one whose answer was lost at that moment.
///
/// One of these belongs to one piece of work and its retries: a direct write makes its own, and the write-behind
/// makes one for its batches, which its buffer retries one at a time, each until it commits (``WriteBehindBuffer``).
final class UnresolvedCommit<Value: Sendable>: Sendable {
    private struct State {
        var attempt: UInt64 = 0
        /// The transaction whose COMMIT was sent last (nil: it wrote nothing), and what its body computed.
        var pending: (transaction: String?, result: Value)?
    }

    private let state = Mutex(State())

    /// The transaction whose outcome is not known yet and the result its body computed; nil when there is none.
    var pending: (transaction: String?, result: Value)? { state.withLock { $0.pending } }

    /// Starts an attempt; its number is the one to give ``committing(_:result:attempt:)``.
    func begin() -> UInt64 {
        state.withLock { state in
            state.attempt += 1
            return state.attempt
        }
    }

    /// Records the transaction of `attempt`, about to send its COMMIT, and what its body computed; ignored when a
    /// later attempt has begun.
    func committing(_ transaction: String?, result: Value, attempt: UInt64) {
        state.withLock { state in
            if state.attempt == attempt { state.pending = (transaction, result) }
        }
    }

    /// Forgets the transaction: its outcome is known.
    func resolved() {
        state.withLock { $0.pending = nil }
    }
}

/// What became of a transaction, in `pg_xact_status`'s words.
enum TransactionStatus: Equatable {
    case committed
    case aborted
    case inProgress
    /// The server does not know it: no longer (older than its oldest kept status, which takes billions
    /// of transactions), or not (a server that took over from the one that got the COMMIT without having
    /// received it). The work runs again: at least once rather than maybe never.
    case forgotten

    /// The id of the transaction open on `connection`; nil when it has none (it wrote nothing).
    static func currentTransaction(on connection: PostgresConnection, logger: Logger) async throws -> String? {
        let rows = try await connection.query("SELECT pg_current_xact_id_if_assigned()::text", logger: logger)
        for try await id in rows.decode(String?.self) { return id }
        return nil
    }

    /// Asks the server what became of `transaction`.
    static func of(
        _ transaction: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> TransactionStatus {
        do {
            let rows = try await connection.query("SELECT pg_xact_status(\(transaction)::xid8)", logger: logger)
            for try await status in rows.decode(String?.self) {
                switch status {
                case "committed": return .committed
                case "aborted": return .aborted
                case "in progress": return .inProgress
                default: return .forgotten
                }
            }
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "22023" {
            // "transaction ID … is in the future": a server that never saw it.
            return .forgotten
        }
        return .forgotten
    }
}

/// The server is still committing a transaction whose COMMIT's answer was lost: its outcome is not known yet.
struct StillCommitting: Error, CustomStringConvertible {
    let transaction: String

    var description: String { "the server is still committing transaction \(transaction)" }
}
