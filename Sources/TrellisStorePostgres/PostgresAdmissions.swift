import Logging
import PostgresNIO
import Synchronization
import TrellisCore
import TrellisStore

/// The spam admissions of the messages a relay has in hand, sent to PostgreSQL together: one call
/// of `trellis_admit_batch` (``PostgresSchema/leanAdmitBatchFunction``) decides them all, in the order
/// they were asked, and reads the `plants` version in the same round trip. A call of one message
/// (requests coming one at a time) binds that message's values as themselves (``AdmitOne``): the
/// same function, without the cost of encoding five arrays of one element.
///
/// Every plant request asks for an admission before anything else, so this is the round trip a
/// request cannot avoid; sending a burst's admissions as one keeps a relay's throughput from being
/// one over PostgreSQL's latency. The first admission asked while none is being sent leads: it
/// yields once, so that every message already queued on the relay's thread asks for its own
/// admission, then sends them all. Admissions asked while a call is on its way wait for it to end
/// and go in the next call, which a task sends.
///
/// The calls go over one connection of their own, opened on first use and again after it fails,
/// and run on that connection's event loop (``EventLoopTaskExecutor``): the round trip every plant
/// request waits for crosses as few threads as it can.
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
    private let url: PostgresURL
    private let logger: Logger
    /// The event loop of the connection, and the executor its calls prefer.
    private let executor = EventLoopTaskExecutor(PostgresConnection.defaultEventLoopGroup.next())
    /// The connection, while open; only the one sender (see ``State/sending``) touches it.
    private let connection = Mutex<PostgresConnection?>(nil)

    init(url: PostgresURL, logger: Logger) {
        self.url = url
        self.logger = logger
    }

    /// Closes the connection; an admission asked later opens another.
    func close() async {
        guard
            let open = connection.withLock({ state in
                defer { state = nil }; return state
            })
        else { return }
        try? await open.close()
    }

    /// The open connection, or a new one.
    private func open() async throws -> PostgresConnection {
        if let open = connection.withLock({ $0 }), !open.isClosed { return open }
        let opened = try await PostgresConnection.connect(
            on: executor.eventLoop,
            configuration: PostgresStore.connectionConfiguration(url),
            id: 1, logger: PostgresStore.silent)
        connection.withLock { $0 = opened }
        return opened
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
        // The leader is sending its own admission: finding none waiting does not end `sending`.
        let others = takeWaiting(room: Self.batchLimit - 1, endingWhenNone: false)
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

    /// Takes up to `room` waiting admissions, oldest first. When none waits and `endingWhenNone`,
    /// marks that no call is being made (under the same lock, so an admission asked next starts one).
    private func takeWaiting(room: Int, endingWhenNone: Bool = true) -> [Waiting] {
        state.withLock { state in
            let taken = Array(state.waiting.prefix(room))
            state.waiting.removeFirst(taken.count)
            if taken.isEmpty && endingWhenNone { state.sending = false }
            return taken
        }
    }

    /// One call for `admissions`; every one gets the call's error when it fails.
    ///
    /// The call gets them grouped by sender, in the byte order of the senders' UTF-8 (PostgreSQL's
    /// `C` collation), each sender's in the order asked: the function then locks each sender's row
    /// once, and every relay locks rows in the same order, so two relays never deadlock.
    private func send(_ asked: [Admission]) async -> [Result<Admitted, any Error>] {
        let logger = self.logger
        let order = Self.groupedBySender(asked)
        let admissions = order.map { asked[$0] }
        sent.add(1, ordering: .relaxed)
        var attempt = 0
        while true {
            attempt += 1
            do {
                let (verdicts, version) = try await withTaskExecutorPreference(executor) {
                    try await BoundedStatements.run(on: try await self.open(), executor: self.executor) { connection in
                        // One message, the usual call when requests come one at a time: its values are bound as
                        // themselves, which postgres-nio encodes for a fraction of the cost of five arrays.
                        if let admission = admissions.first, admissions.count == 1 {
                            let statement = AdmitOne(admission)
                            for try await (verdict, version) in try await connection.execute(statement, logger: logger)
                            {
                                return ([verdict], version)
                            }
                        } else {
                            let statement = AdmitBatch(
                                senders: admissions.map(\.sender), times: admissions.map(\.at),
                                limits: admissions.map(\.limit), windows: admissions.map(\.window),
                                allowances: admissions.map(\.usingAllowance))
                            for try await row in try await connection.execute(statement, logger: logger) { return row }
                        }
                        throw StoreError(code: .operationFailed, message: "trellis_admit_batch returned no row")
                    }
                }
                guard verdicts.count == admissions.count else {
                    throw StoreError(
                        code: .operationFailed,
                        message:
                            "trellis_admit_batch returned \(verdicts.count) verdicts for \(admissions.count) messages")
                }
                var results = [Result<Admitted, any Error>](
                    repeating: .success(Admitted(verdict: .allowed, plantsVersion: version)),
                    count: asked.count)
                for (position, verdict) in zip(order, verdicts) {
                    let decided: SpamVerdict =
                        switch verdict {
                        case "kicked": .kicked
                        case "muted": .muted
                        default: .allowed
                        }
                    results[position] = .success(Admitted(verdict: decided, plantsVersion: version))
                }
                return results
            } catch {
                // Two relays lock senders in the same order, so a deadlock should not happen; a
                // serialization failure or deadlock is retried all the same, like every transaction.
                if attempt < 5, PostgresFailure.isRetryable(error) { continue }
                // The connection is given up after any other failure: one the server closed (restarted since,
                // say) or ``BoundedStatements`` abandoned is opened again, at once when the connection was
                // simply found closed (a stale connection is not an outage; a server really away then fails
                // to connect), and for the next call otherwise. An admission counted by a call whose answer
                // was lost is counted again: it only brings its sender nearer the limit.
                if let failed = connection.withLock({ state in
                    defer { state = nil }; return state
                }) {
                    try? await failed.close()
                }
                if attempt < 5, PostgresFailure.isConnectionLoss(error) { continue }
                let failure = PostgresFailure.wrap(
                    error, operation: "admitting \(admissions.count) messages against the spam limit")
                return Array(repeating: .failure(failure), count: admissions.count)
            }
        }
    }
}

extension PostgresAdmissions {
    /// The positions of `admissions`, grouped by sender in the byte order of the senders' UTF-8, each
    /// sender's positions in the order asked.
    static func groupedBySender(_ admissions: [Admission]) -> [Int] {
        if admissions.count < 2 || admissions.allSatisfy({ $0.sender.utf8.elementsEqual(admissions[0].sender.utf8) }) {
            return Array(admissions.indices)
        }
        return admissions.indices.sorted { left, right in
            let (a, b) = (admissions[left].sender.utf8, admissions[right].sender.utf8)
            if a.elementsEqual(b) { return left < right }
            return a.lexicographicallyPrecedes(b)
        }
    }
}

/// The statement of ``PostgresAdmissions`` for two admissions or more (``AdmitOne`` for one),
/// prepared once per connection: the server plans it once instead of parsing it again for every burst.
private struct AdmitBatch: PostgresPreparedStatement {
    static let name = "trellis_admit_batch"
    static let sql = """
        SELECT trellis_admit_batch($1, $2, $3, $4, $5), (SELECT version FROM trellis_version WHERE name = 'plants')
        """
    typealias Row = ([String], Int64)

    var senders: [String]
    var times: [Int64]
    var limits: [Int32]
    var windows: [Int64]
    var allowances: [Bool]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(senders)
        bindings.append(times)
        bindings.append(limits)
        bindings.append(windows)
        bindings.append(allowances)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}

/// ``AdmitBatch`` for one message: the same function and version read, its one verdict read out of
/// the array on the server, with scalar bindings.
private struct AdmitOne: PostgresPreparedStatement {
    static let name = "trellis_admit_one"
    static let sql = """
        SELECT (trellis_admit_batch(ARRAY[$1::text], ARRAY[$2::bigint], ARRAY[$3::integer], ARRAY[$4::bigint],
                                    ARRAY[$5::boolean]))[1],
               (SELECT version FROM trellis_version WHERE name = 'plants')
        """
    typealias Row = (String, Int64)

    var admission: PostgresAdmissions.Admission

    init(_ admission: PostgresAdmissions.Admission) {
        self.admission = admission
    }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(admission.sender)
        bindings.append(admission.at)
        bindings.append(admission.limit)
        bindings.append(admission.window)
        bindings.append(admission.usingAllowance)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}
