import Logging
import PostgresNIO
import Synchronization
import TrellisCore

/// The spam admissions of the messages a relay has in hand, sent to PostgreSQL together: one call
/// of `trellis_admit_batch` (``PostgresSchema/admitBatchFunction``) decides them all, in the order
/// they were asked, and reads the `plants` version in the same round trip.
///
/// Every plant request asks for an admission before anything else, so this is the round trip a
/// request cannot avoid; sending a burst's admissions as one keeps a relay's throughput from being
/// one over PostgreSQL's latency. The first admission asked while none is being sent leads: it
/// yields once, so that every message already queued on the relay's thread asks for its own
/// admission, then sends them all. Admissions asked while a call is on its way wait for it to end
/// and go in the next call, which a task sends.
final class PostgresAdmissions: Sendable {
    /// One message to admit.
    struct Admission: Sendable {
        var sender: String
        var at: Int64
        var limit: Int32
        var window: Int64
        var usingAllowance: Bool
    }

    /// How one message was admitted, and the `plants` version read in the same statement.
    struct Admitted: Sendable {
        var verdict: SpamVerdict
        var plantsVersion: Int64
    }

    private struct Waiting {
        var admission: Admission
        var continuation: CheckedContinuation<Admitted, any Error>
    }

    private struct State {
        var waiting: [Waiting] = []
        /// Whether a call is being made (by a leader or the sending task).
        var sending = false
    }

    /// The most admissions in one call.
    static let batchLimit = 1024

    private let state = Mutex(State())
    private let sent = Atomic<Int>(0)
    private let client: PostgresClient
    private let logger: Logger

    init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// How many calls were made so far.
    var calls: Int { sent.load(ordering: .relaxed) }

    /// Admits one message, together with those asked at the same time.
    func admit(_ admission: Admission) async throws -> Admitted {
        let leads = state.withLock { state in
            guard !state.sending else { return false }
            state.sending = true
            return true
        }
        guard leads else {
            return try await withCheckedThrowingContinuation { continuation in
                let startSending = state.withLock { state in
                    state.waiting.append(Waiting(admission: admission, continuation: continuation))
                    guard !state.sending else { return false }
                    state.sending = true
                    return true
                }
                if startSending { Task { await self.sendWaiting() } }
            }
        }
        await Task.yield()
        let others = takeWaiting(room: Self.batchLimit - 1)
        let results = await send([admission] + others.map(\.admission))
        for (waiting, result) in zip(others, results.dropFirst()) { waiting.continuation.resume(with: result) }
        if state.withLock({ state in
            if state.waiting.isEmpty { state.sending = false }
            return state.sending
        }) {
            Task { await self.sendWaiting() }
        }
        return try results[0].get()
    }

    /// Sends the waiting admissions, call after call, until none waits.
    private func sendWaiting() async {
        while true {
            let batch = takeWaiting(room: Self.batchLimit)
            guard !batch.isEmpty else { return }
            let results = await send(batch.map(\.admission))
            for (waiting, result) in zip(batch, results) { waiting.continuation.resume(with: result) }
        }
    }

    /// Takes up to `room` waiting admissions, oldest first; when none waits, marks that no call is
    /// being made (under the same lock, so an admission asked next starts one).
    private func takeWaiting(room: Int) -> [Waiting] {
        state.withLock { state in
            let taken = Array(state.waiting.prefix(room))
            state.waiting.removeFirst(taken.count)
            if taken.isEmpty { state.sending = false }
            return taken
        }
    }

    /// One call for `admissions`; every one gets the call's error when it fails.
    private func send(_ admissions: [Admission]) async -> [Result<Admitted, any Error>] {
        let logger = self.logger
        let client = self.client
        let senders = admissions.map(\.sender), times = admissions.map(\.at), limits = admissions.map(\.limit)
        let windows = admissions.map(\.window), allowances = admissions.map(\.usingAllowance)
        sent.add(1, ordering: .relaxed)
        var attempt = 0
        while true {
            attempt += 1
            do {
                let (verdicts, version) = try await client.withConnection { connection in
                    let rows = try await connection.query("""
                        SELECT trellis_admit_batch(\(senders), \(times), \(limits), \(windows), \(allowances)),
                               (SELECT version FROM trellis_version WHERE name = 'plants')
                        """, logger: logger)
                    for try await row in rows.decode(([String], Int64).self) { return row }
                    throw StoreError(code: .operationFailed, message: "trellis_admit_batch returned no row")
                }
                guard verdicts.count == admissions.count else {
                    throw StoreError(code: .operationFailed,
                                     message: "trellis_admit_batch returned \(verdicts.count) verdicts for \(admissions.count) messages")
                }
                return verdicts.map { verdict in
                    let decided: SpamVerdict = switch verdict {
                    case "kicked": .kicked
                    case "muted": .muted
                    default: .allowed
                    }
                    return .success(Admitted(verdict: decided, plantsVersion: version))
                }
            } catch {
                // Two relays lock senders in the same order, so a deadlock should not happen; a
                // serialization failure or deadlock is retried all the same, like every transaction.
                if attempt < 5, PostgresFailure.isRetryable(error) { continue }
                let failure = PostgresFailure.wrap(error, operation: "admitting \(admissions.count) messages against the spam limit")
                return Array(repeating: .failure(failure), count: admissions.count)
            }
        }
    }
}
