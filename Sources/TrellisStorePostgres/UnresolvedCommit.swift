import Logging
import PostgresNIO
import Synchronization
import TrellisStore

/// A transaction whose COMMIT was sent and whose answer was lost, found out before the work runs again.
///
/// **Why.** A connection lost during a COMMIT (the server killed, the network cut, the statement past its limit)
/// leaves the outcome unknown: the server may have committed. Work that is retried (a batch written behind, a
/// handled message's transaction waiting out an outage) would then take effect twice: a run of readings stored
/// twice, a press counted twice.
///
/// **How.** A transaction given one of these takes its id (`pg_current_xact_id()`) after its BEGIN and leaves the
/// id, with the result its body computed, here just before it sends the COMMIT. A definite outcome clears it. When
/// the outcome is lost, the next attempt of the same work first asks the server what became of that transaction
/// (`pg_xact_status`, which survives a crash of the server: a transaction that was in progress then is aborted):
/// - `committed`: the work is done; the kept result is returned and nothing runs again;
/// - `aborted`: nothing took effect; the work runs again;
/// - `in progress`: the server is still at it; still unknown, a failure that passes, asked again at the next attempt.
///
/// One of these belongs to one piece of work and its retries: a direct write makes its own, and the write-behind
/// makes one for its batches, which its buffer retries one at a time, each until it commits (``WriteBehindBuffer``).
final class UnresolvedCommit<Result: Sendable>: Sendable {
    private let state = Mutex<(transaction: String, result: Result)?>(nil)

    /// The transaction whose outcome is unknown and the result its body computed; nil when there is none.
    var pending: (transaction: String, result: Result)? { state.withLock { $0 } }

    /// Records the transaction about to send its COMMIT and what its body computed.
    func committing(_ transaction: String, result: Result) {
        state.withLock { $0 = (transaction, result) }
    }

    /// Forgets the transaction: its outcome is known.
    func resolved() {
        state.withLock { $0 = nil }
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

    /// The id of the transaction open on `connection`, assigning one if it has none yet.
    static func currentTransaction(on connection: PostgresConnection, logger: Logger) async throws -> String {
        for try await id in try await connection.query("SELECT pg_current_xact_id()::text", logger: logger)
            .decode(String.self)
        {
            return id
        }
        throw StoreError(code: .operationFailed, message: "the server gave no transaction id")
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
