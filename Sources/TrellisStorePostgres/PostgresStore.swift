import Foundation
import Logging
import NIOSSL
import PostgresNIO
import TrellisCore
import TrellisStore

/// The PostgreSQL implementation of ``TrellisStore``, through postgres-nio, for several relays
/// sharing one state.
///
/// Every change is one transaction at PostgreSQL's default isolation, READ COMMITTED, written so
/// that two relays racing cannot break an invariant: the SQL does the arithmetic (increments,
/// capped appends, conditional inserts), a row every racer must update is locked first where a
/// check spans rows (the plant limit takes an advisory lock, a registration is read `FOR UPDATE`
/// before its missed count is reset), and unique constraints settle names. A transaction that
/// loses a deadlock or serialization race is retried whole.
///
/// Another relay may change any row at any time, so a read asks the database, except the plant
/// tracker's two frequent reads: their answers are kept tagged with the version of the plant tables
/// they were read at, and given again only to a message that saw no newer version
/// (``PostgresReadCache``). The spam admissions of the messages in hand share one round trip
/// (``PostgresAdmissions``), which also reads that version. Readings, log lines, dead letters and their delivery marks are written behind under
/// the same rule as in SQLite (``BufferedCommits``). Delivery marks are kept per relay: `owner`
/// is the relay's MQTT client id, whose session the broker's packet identifiers belong to.
public final class PostgresStore: BufferedCommitsStore {
    /// The pool of connections, run by ``runner`` until ``close()``.
    let client: PostgresClient
    private let runner: Task<Void, Never>
    /// Where the store is (password hidden), for messages.
    public let url: PostgresURL
    /// The relay whose delivery marks this store reads and writes.
    let owner: String
    /// The write-behind buffer, commit health and patience shared with every store.
    package let commits: BufferedCommits
    /// The most dead letters kept.
    let deadLetterLimit: Int
    /// Where queries are logged (at trace level only, by postgres-nio).
    let logger: Logger
    /// The plant tracker's answers, kept while the plant tables do not change.
    let readCache: PostgresReadCache
    /// Every read is a round trip to the server: read requests handled side by side overlap them.
    public var readsWaitOnServer: Bool { true }
    public var readsObservedVersions: Bool { true }
    /// The spam admissions of the messages in hand, sent together.
    let admissions: PostgresAdmissions

    /// Connects to `url`, creating or migrating the schema.
    ///
    /// - Parameters:
    ///   - owner: the relay's MQTT client id; its delivery marks are kept apart from other relays'.
    ///   - connections: the most connections this relay opens.
    /// - Throws: ``StoreError`` with code `.cannotOpen`, naming the URL without its password, when
    ///   the server cannot be reached, refuses the login, or the schema cannot be migrated.
    public static func connect(
        _ url: PostgresURL, owner: String, connections: Int = 8,
        deadLetterLimit: Int = StoreDefaults.deadLetterLimit,
        logger: Logger = Logger(label: "trellis.store"), patience: Duration = .seconds(4), creating: Bool = true
    ) async throws -> PostgresStore {
        // One plain connection first: an unreachable server or a refused login is reported at
        // once, in the server's words, rather than after the pool's retries give up.
        do {
            try await probe(url)
        } catch {
            let problem = PostgresProblem(
                kind: PostgresFailure.kind(of: error), description: PostgresFailure.describe(error),
                transient: PostgresFailure.isTransient(error))
            throw StoreError(
                code: .cannotOpen, message: "cannot open the PostgreSQL store at \(url): \(problem.description)",
                underlying: problem)
        }
        let quiet = Self.silent
        var configuration = PostgresClient.Configuration(
            host: url.host, port: url.port, username: url.user, password: url.password, database: url.database,
            tls: try tls(for: url.sslMode))
        configuration.options.maximumConnections = max(2, connections)
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.additionalStartupParameters = Self.startupParameters
        let store = PostgresStore(
            client: PostgresClient(configuration: configuration, backgroundLogger: quiet),
            url: url, owner: owner, deadLetterLimit: deadLetterLimit, logger: logger,
            patience: patience)
        do {
            if creating {
                try await Self.checkServerVersion(store.client, url: url, logger: logger)
                try await PostgresSchema.migrate(store.client, logger: logger)
            } else {
                // Opened only to read: nothing is created or migrated, beside relays that may run
                // an older release on the same database.
                try await Self.checkReadable(store.client, url: url, logger: logger)
            }
        } catch let error as StoreError {
            store.runner.cancel()
            throw error
        } catch {
            store.runner.cancel()
            throw StoreError(
                code: .cannotOpen,
                message: "cannot open the PostgreSQL store at \(url): \(PostgresFailure.describe(error))")
        }
        logger.info(
            "the PostgreSQL store is open; the server shows its connections as \(applicationName)",
            metadata: ["store": "\(url)"])
        return store
    }

    /// The oldest server a relay writes to: PostgreSQL 13, the first with `pg_xact_status` of an `xid8`, by which
    /// a transaction whose COMMIT's answer was lost is found out (``UnresolvedCommit``).
    static let oldestServer = 130_000

    /// Refuses a server older than ``oldestServer``, naming both versions, before anything is written.
    private static func checkServerVersion(_ client: PostgresClient, url: PostgresURL, logger: Logger) async throws {
        for try await number in try await client.query("SHOW server_version_num", logger: logger).decode(String.self) {
            if let refusal = refusal(ofServerVersion: number, at: url) { throw refusal }
        }
    }

    /// Why a server whose `server_version_num` is `number` is refused; nil when it is new enough (or says
    /// something else, which the statements themselves will then refuse in the server's words).
    static func refusal(ofServerVersion number: String, at url: PostgresURL) -> StoreError? {
        guard let version = Int(number), version < oldestServer else { return nil }
        // 90624 is 9.6.24, 120003 is 12.3: the major version is one number from 10 on.
        let major = version >= 100_000 ? "\(version / 10_000)" : "\(version / 10_000).\(version / 100 % 100)"
        return StoreError(
            code: .cannotOpen,
            message: "the PostgreSQL server at \(url) runs PostgreSQL \(major); Trellis needs PostgreSQL "
                + "\(oldestServer / 10_000) or newer")
    }

    /// Refuses a database to read that holds no Trellis tables (``StoreError/Code/noState``) or a
    /// schema older than this release's (its reads would miss what the newer migrations add).
    private static func checkReadable(_ client: PostgresClient, url: PostgresURL, logger: Logger) async throws {
        guard let applied = try await PostgresSchema.applied(client, logger: logger) else {
            throw StoreError(code: .noState, message: "the PostgreSQL database at \(url) holds no Trellis state yet")
        }
        let pending = PostgresSchema.migrations.map(\.name).filter { !applied.contains($0) }
        guard pending.isEmpty else {
            throw StoreError(
                code: .cannotOpen,
                message: "the PostgreSQL database at \(url) holds the state of an older Trellis (not yet migrated: "
                    + pending.joined(separator: ", ")
                    + "); a command that only reads does not migrate it: `trellis run` of this release does")
        }
    }

    private init(
        client: PostgresClient, url: PostgresURL, owner: String, deadLetterLimit: Int, logger: Logger,
        patience: Duration
    ) {
        self.client = client
        self.runner = Task { await client.run() }
        self.url = url
        self.owner = owner
        self.logger = logger
        let limit = max(0, deadLetterLimit)
        self.deadLetterLimit = limit
        let health = StoreWriteHealth(logger: logger)
        let readCache = PostgresReadCache()
        self.readCache = readCache
        self.admissions = PostgresAdmissions(url: url, logger: logger)
        let reachability: @Sendable () async -> (any Error)? = {
            do {
                try await Self.probe(url)
                return nil
            } catch {
                return PostgresFailure.wrap(error, operation: "connecting to the PostgreSQL server at \(url)")
            }
        }
        let spared = SparedRecords(logger: logger)
        // The buffer calls again with the same batch until it commits, so a lost COMMIT kept here is
        // this call's batch, found out before it is written again.
        let unresolved = UnresolvedCommit<(count: Int, error: any Error)?>()
        self.commits = BufferedCommits(health: health, patience: patience, reachability: reachability) { batch in
            defer { if batch.contains(where: \.changesCachedReads) { readCache.invalidate() } }
            let skipped = try await Self.transaction(
                client, logger: logger, operation: "writing \(batch.count) buffered rows", resolving: unresolved
            ) { connection in
                try await PostgresBufferedWrite.write(
                    batch, owner: owner, deadLetterLimit: limit, on: connection, logger: logger)
            }
            if let skipped { spared.skipped(skipped.count, because: PostgresFailure.describe(skipped.error)) }
        }
    }

    /// The TLS settings of libpq's `sslmode`: `prefer` and `require` do not check the certificate
    /// (as libpq), `verify-full` checks it against the system's CAs and the host name.
    private static func tlsConfiguration(for mode: PostgresURL.SSLMode) -> TLSConfiguration? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch mode {
        case .disable: return nil
        case .prefer, .require: configuration.certificateVerification = .none
        case .verifyFull: break
        }
        return configuration
    }

    private static func tls(for mode: PostgresURL.SSLMode) throws -> PostgresClient.Configuration.TLS {
        guard let configuration = tlsConfiguration(for: mode) else { return .disable }
        return mode == .prefer ? .prefer(configuration) : .require(configuration)
    }

    /// A logger for postgres-nio's own background messages, which say nothing the store's errors do
    /// not (and a level set on a copy of the process's logger would change every logger's level).
    static let silent = Logger(label: "trellis.store.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The settings of one connection to `url` outside the pool (the probe, the admissions).
    static func connectionConfiguration(_ url: PostgresURL) throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS
        if let configuration = tlsConfiguration(for: url.sslMode) {
            let context = try NIOSSLContext(configuration: configuration)
            tls = url.sslMode == .prefer ? .prefer(context) : .require(context)
        } else {
            tls = .disable
        }
        var configuration = PostgresConnection.Configuration(
            host: url.host, port: url.port, username: url.user, password: url.password, database: url.database, tls: tls
        )
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.additionalStartupParameters = startupParameters
        return configuration
    }

    /// Opens and closes one connection to `url`.
    private static func probe(_ url: PostgresURL) async throws {
        let connection = try await PostgresConnection.connect(
            configuration: connectionConfiguration(url), id: 0, logger: silent)
        try await connection.close()
    }

    /// Runs `body` in one transaction on a pooled connection, with the delivery bound to
    /// ``HandledDelivery/current`` recorded in it, wrapping failures as ``StoreError``. A COMMIT whose
    /// answer was lost is found out before the write runs again (``UnresolvedCommit``).
    func write<T: Sendable>(
        _ operation: @autoclosure () -> String, within limit: Duration = BoundedStatements.limit,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let operation = operation()
        let mark = HandledDelivery.current
        let owner = self.owner
        let logger = self.logger
        let client = self.client
        // Committed or not (a lost connection leaves it unknown), what was kept may be out of date.
        defer { readCache.invalidate() }
        // Kept across the attempts of this write: one that waits out an outage is never applied twice. The
        // mark's statement also gives the transaction's id.
        let unresolved = UnresolvedCommit<(T, transaction: String?)>()
        return try await commits.direct(reportsEveryOutcome: true) {
            try commits.checkOpen(operation)
            return try await Self.transaction(
                client, logger: logger, operation: operation, within: limit, resolving: unresolved,
                identifiedBy: \.transaction
            ) { connection in
                let result = try await body(connection)
                var transaction: String?
                if let mark {
                    transaction = try await PostgresBufferedWrite.record(
                        mark, owner: owner, on: connection, logger: logger)
                }
                return (result, transaction)
            }
        }.0
    }

    /// Runs `body` on a pooled connection outside a transaction (each statement sees what was
    /// committed when it started), wrapping failures as ``StoreError``.
    func read<T: Sendable>(
        _ operation: @autoclosure () -> String,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let operation = operation()
        let client = self.client
        return try await commits.direct(reportsEveryOutcome: false) {
            try commits.checkOpen(operation)
            var attempt = 0
            while true {
                attempt += 1
                do {
                    return try await client.withConnection { connection in
                        try await BoundedStatements.run(on: connection, body)
                    }
                } catch {
                    if attempt < Self.attempts, PostgresFailure.isConnectionLoss(error) { continue }
                    throw PostgresFailure.wrap(error, operation: operation)
                }
            }
        }
    }

    /// How many times a transaction or read is tried at once before its failure is reported.
    static let attempts = 5

    /// Runs `body` in a transaction, retrying it whole (up to ``attempts`` times) when PostgreSQL chose
    /// it as the victim of a deadlock or a serialization failure, or its connection turned out to be
    /// closed (``PostgresFailure/isConnectionLoss(_:)``): after a server restart the pool may still
    /// hold connections of the old server, and a stale connection is not an outage; the next one is
    /// tried at once, and a server that is really away fails to connect and is reported. The
    /// transaction is bounded by `limit` and by its connection's life (``BoundedStatements``).
    ///
    /// With `unresolved`, a COMMIT whose answer is lost is found out before the work runs again, here
    /// or at a later call with the same `unresolved` (see ``UnresolvedCommit``): work that commits is
    /// never applied twice. The transaction's id is read before the COMMIT, unless `identify` finds it in
    /// what the body returned (a statement of the body gave it, saving a round trip). Without it the lost outcome is thrown (``CommitOutcomeUnknown``), for work
    /// that is not retried and changes nothing (a read-only snapshot).
    static func transaction<T: Sendable>(
        _ client: PostgresClient, logger: Logger, operation: String, within limit: Duration = BoundedStatements.limit,
        resolving unresolved: UnresolvedCommit<T>? = nil, identifiedBy identify: (@Sendable (T) -> String?)? = nil,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        var attempt = 0
        var stillCommitting = false
        while true {
            attempt += 1
            let commit = CommitPhase()
            let number = unresolved?.begin() ?? 0
            do {
                if let unresolved, let pending = unresolved.pending {
                    if let transaction = pending.transaction {
                        // The server was still committing it: give it a moment (a cancellation cuts the wait short,
                        // and the loop asks no more after this question).
                        if stillCommitting { try? await Task.sleep(for: .milliseconds(100)) }
                        stillCommitting = false
                        switch try await outcome(of: transaction, client: client, logger: logger, within: limit) {
                        case .committed:
                            unresolved.resolved()
                            return pending.result
                        case .aborted:
                            break
                        case .forgotten:
                            logger.warning(
                                "the outcome of a COMMIT whose answer was lost is not known to the server; the work runs again",
                                metadata: ["operation": "\(operation)"])
                        case .inProgress:
                            stillCommitting = true
                            throw CommitOutcomeUnknown(underlying: StillCommitting(transaction: transaction))
                        }
                    }
                    // Aborted, or it wrote nothing: nothing took effect.
                    unresolved.resolved()
                }
                let result = try await client.withConnection { connection in
                    try await BoundedStatements.run(on: connection, within: limit, commit: commit) { connection in
                        try await connection.query("BEGIN", logger: logger)
                        let result: T
                        do {
                            result = try await body(connection)
                            // Nothing is committed yet: a connection found closed here is a clean failure.
                            if connection.isClosed { throw StatementAbandoned(reason: .connectionClosed) }
                            if let unresolved {
                                var transaction = identify?(result)
                                if transaction == nil {
                                    transaction = try await TransactionStatus.currentTransaction(
                                        on: connection, logger: logger)
                                }
                                unresolved.committing(transaction, result: result, attempt: number)
                            }
                        } catch {
                            _ = try? await connection.query("ROLLBACK", logger: logger)
                            throw error
                        }
                        commit.begin()
                        do {
                            try await connection.query("COMMIT", logger: logger)
                        } catch {
                            throw CommitPhase.outcome(of: error)
                        }
                        return result
                    }
                }
                unresolved?.resolved()
                return result
            } catch {
                // Abandoned once its COMMIT was sent (past the limit), the transaction may have taken effect.
                let error =
                    commit.began && error is StatementAbandoned ? CommitOutcomeUnknown(underlying: error) : error
                // A COMMIT the server refused: nothing took effect, and nothing is left to find out.
                if commit.began && !(error is CommitOutcomeUnknown) { unresolved?.resolved() }
                // A lost outcome kept to be found out is asked about at once, also when the asking found its
                // pooled connection closed too (the pool may not know yet): nothing runs twice.
                let resolvable =
                    unresolved?.pending != nil && (error is CommitOutcomeUnknown || error is StatementAbandoned)
                if attempt < Self.attempts, !Task.isCancelled,
                    PostgresFailure.isRetryable(error) || PostgresFailure.isConnectionLoss(error) || resolvable
                {
                    continue
                }
                throw PostgresFailure.wrap(error, operation: operation)
            }
        }
    }

    /// What became of `transaction`, asked on a pooled connection.
    private static func outcome(
        of transaction: String, client: PostgresClient, logger: Logger, within limit: Duration
    ) async throws -> TransactionStatus {
        try await client.withConnection { connection in
            try await BoundedStatements.run(on: connection, within: limit) { connection in
                try await TransactionStatus.of(transaction, on: connection, logger: logger)
            }
        }
    }

    /// Writes what is queued, then closes every connection. Later calls do nothing.
    public func close() async throws {
        guard commits.beginClosing() else { return }
        let flushFailure = await commits.settleForClose()
        await admissions.close()
        runner.cancel()
        if let flushFailure { throw flushFailure }
    }

    public func checkReachable() async throws {
        if let failure = await commits.reachability?() { throw failure }
    }
}

extension PostgresStore {
    /// The name the server shows for this process's connections (`pg_stat_activity`, which every
    /// role on the server may read): `trellis` and eight random hex digits drawn at start, logged
    /// once when the store connects. A database administrator tells the relays of a group apart by
    /// it, and no role learns the MQTT client id from it (a share group's ids are often guessable,
    /// so no digest of the id would hide it).
    static let applicationName: String = {
        var generator = SystemRandomNumberGenerator()
        let hex = String(UInt32.random(in: .min ... .max, using: &generator), radix: 16)
        return "trellis " + String(repeating: "0", count: 8 - hex.count) + hex
    }()

    /// How long the server lets one of the store's sessions sit idle inside a transaction before it
    /// ends the session. A relay paused (SIGSTOP), hung or cut off in the middle of a transaction
    /// would otherwise keep its row and advisory locks for as long as it stays so, and every other
    /// relay of its share group would wait on them: one paused relay stalled the other past the
    /// broker's keepalive in the fault matrix. The longest a writing transaction of the store waits
    /// on anything but the server is ``withSharedLock(_:_:)``'s wait for the broker (10 s, after
    /// its read of the store); an export of the state, which only reads, lifts the limit for its
    /// own transaction. A transaction ended so is rolled back and tried again on a new connection,
    /// as one whose process was starved past ``BoundedStatements``' limit is.
    static let idleInTransactionLimit = 15

    /// What every connection of the store tells the server at its start: its name
    /// (``applicationName``) and ``idleInTransactionLimit``.
    static var startupParameters: [(String, String)] {
        [("application_name", applicationName), ("idle_in_transaction_session_timeout", "\(idleInTransactionLimit)s")]
    }
}
