import PostgresNIO
import TrellisStore

/// ``StoreLeases`` over PostgreSQL: a session advisory lock on the lease's name, taken with
/// `pg_try_advisory_lock` on a connection of the lease's own, outside the pool, kept for the
/// lease's whole term (so leases never take the connections the message handling needs, however
/// many bridges a relay holds) and closed when it ends.
/// PostgreSQL releases the lock when that session ends, however it ends, so a relay that dies or
/// loses its connection frees the lease for another relay. The holder asks the connection every
/// ``leaseCheck`` whether it still answers; when it does not within ``leaseCheckLimit`` the
/// connection is closed and `body` cancelled, since its lock may be gone. The server, for its part,
/// asks the holder's socket after ``leaseKeepalive`` seconds of silence (TCP keepalives on that
/// session), so a holder whose host died or was cut off without a word frees the lease within
/// about 11 s instead of the system's two hours.
extension PostgresStore: StoreLeases {
    /// How often the holder of a lease makes sure its session still holds it.
    static let leaseCheck: Duration = .seconds(2)
    /// How long an answer to that check may take before the lease is given up.
    static let leaseCheckLimit: Duration = .seconds(5)
    /// Seconds of silence after which the server probes the holder's socket (then every 2 s, 3 times).
    static let leaseKeepalive = 5

    public func withLease(_ name: String, _ body: @escaping @Sendable () async -> Void) async throws -> Bool {
        try commits.checkOpen("withLease(\(name))")
        let connection = try await PostgresConnection.connect(
            configuration: Self.connectionConfiguration(url), id: 2, logger: Self.silent)
        do {
            let held = try await hold(name, on: connection, body)
            try? await connection.close()
            return held
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Takes the lease `name` on `connection` and, when taken, runs `body` for the term.
    private func hold(_ name: String, on connection: PostgresConnection, _ body: @escaping @Sendable () async -> Void)
        async throws -> Bool
    {
        let logger = self.logger
        let taken = try await BoundedStatements.run(on: connection) { connection in
            try await connection.query(
                """
                SELECT set_config('tcp_keepalives_idle', \(String(Self.leaseKeepalive)), false),
                       set_config('tcp_keepalives_interval', '2', false),
                       set_config('tcp_keepalives_count', '3', false)
                """, logger: logger)
            var taken = false
            for try await held in try await connection.query(
                "SELECT pg_try_advisory_lock(hashtext('trellis-lease'), hashtext(\(name)))", logger: logger
            ).decode(Bool.self) {
                taken = held
            }
            return taken
        }
        guard taken else { return false }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await body() }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: Self.leaseCheck)
                    guard !Task.isCancelled else { return }
                    do {
                        try await BoundedStatements.run(on: connection, within: Self.leaseCheckLimit) {
                            _ = try await $0.query("SELECT 1", logger: logger)
                        }
                    } catch {
                        logger.warning(
                            "gave up the lease: its connection to PostgreSQL stopped answering",
                            metadata: ["lease": "\(name)", "error": "\(error)"])
                        return
                    }
                }
            }
            // Whichever ends first ends the term: the work, or the session that holds the lock.
            await group.next()
            group.cancelAll()
        }
        if !connection.isClosed {
            _ = try? await BoundedStatements.run(on: connection) { connection in
                try await connection.query(
                    "SELECT pg_advisory_unlock(hashtext('trellis-lease'), hashtext(\(name)))", logger: logger)
            }
        }
        return true
    }
}
