import Foundation
import NIOPosix
import PostgresNIO
import Testing
@testable import TrellisStorePostgres
import TrellisTestSupport

/// Work on a PostgreSQL connection ends, whatever happens to the connection: past its limit, or
/// when the server closes the connection under it or before it. postgres-nio alone drops a
/// statement written to a connection whose close it has finished, and its caller waits forever.
@Suite("Statements bounded by their connection's life and a limit", .timeLimit(.minutes(1)))
struct BoundedStatementsTests {
    static func connect(_ url: PostgresURL) async throws -> PostgresConnection {
        try await PostgresConnection.connect(
            configuration: PostgresStore.connectionConfiguration(url), id: 7, logger: PostgresStore.silent)
    }

    @Test(
        "a statement past its limit is abandoned, a failure that passes, and its connection closed",
        .enabled(if: PostgresTestServer.isRequired))
    func limit() async throws {
        try await PostgresTestServer.withDatabase { url in
            let connection = try await Self.connect(url)
            let error = await #expect(throws: StatementAbandoned.self) {
                try await BoundedStatements.run(on: connection, within: .milliseconds(300)) { connection in
                    try await connection.query("SELECT pg_sleep(30)", logger: PostgresStore.silent).collect().count
                }
            }
            #expect(error.map(PostgresFailure.isTransient) == true)
            try await connection.closeFuture.get()
            #expect(connection.isClosed)
        }
    }

    @Test(
        "an answer that came while the work's executor was held is taken: the limit is the server's, not the process's",
        .enabled(if: PostgresTestServer.isRequired))
    func heldExecutor() async throws {
        try await PostgresTestServer.withDatabase { url in
            let connection = try await Self.connect(url)
            // The work's own thread, held for 2 s once its statement is sent: its answer arrives within
            // the 300 ms limit but cannot be taken before the thread is free, well past the limit.
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let executor = EventLoopTaskExecutor(group.next())
            let count = try await BoundedStatements.run(
                on: connection, within: .milliseconds(300), executor: executor
            ) { connection in
                executor.eventLoop.execute { Thread.sleep(forTimeInterval: 2) }
                return try await connection.query("SELECT 1", logger: PostgresStore.silent).collect().count
            }
            #expect(count == 1)
            #expect(!connection.isClosed)
            try await connection.close()
            try await group.shutdownGracefully()
        }
    }

    @Test(
        "the server ending the session: the statement in flight fails, and one sent after the close fails too instead of waiting",
        .enabled(if: PostgresTestServer.isRequired))
    func serverClosed() async throws {
        try await PostgresTestServer.withDatabase { url in
            let victim = try await Self.connect(url)
            let killer = try await Self.connect(url)
            let pid = try await victim.values("SELECT pg_backend_pid()", as: Int32.self, logger: PostgresStore.silent)[
                0]
            let sleeping = Task {
                try await BoundedStatements.run(on: victim) { connection in
                    try await connection.query("SELECT pg_sleep(30)", logger: PostgresStore.silent).collect().count
                }
            }
            try await eventually("the statement runs") {
                try await killer.values(
                    "SELECT count(*)::int FROM pg_stat_activity WHERE pid = \(pid) AND query LIKE '%pg_sleep%'",
                    as: Int32.self, logger: PostgresStore.silent) == [1]
            }
            _ = try await killer.query("SELECT pg_terminate_backend(\(pid))", logger: PostgresStore.silent)
            let inFlight = await sleeping.result
            #expect(throws: (any Error).self) { try inFlight.get() }
            if case let .failure(error) = inFlight { #expect(PostgresFailure.isTransient(error), "\(error)") }

            try await victim.closeFuture.get()
            let after = await #expect(throws: StatementAbandoned.self) {
                try await BoundedStatements.run(on: victim) { connection in
                    try await connection.query("SELECT 1", logger: PostgresStore.silent).collect().count
                }
            }
            #expect(after.map(PostgresFailure.isTransient) == true)
            try await killer.close()
        }
    }

    @Test(
        "the spam admissions, the pool's transactions and reads all recover after the server ends every session",
        .enabled(if: PostgresTestServer.isRequired))
    func sessionsEnded() async throws {
        try await PostgresTestServer.withDatabase { url in
            let store = try await PostgresStore.connect(url, owner: "relay")
            let killer = try await Self.connect(url)
            #expect(
                try await store.admitMessage(sender: "a", at: Date(), limit: 100, window: 60, usingAllowance: false)
                    == .allowed)
            _ = try await store.recordPress(button: "door", at: Date(), historyLimit: 20)
            for round in 1...3 {
                _ = try await killer.query(
                    """
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid()
                    """, logger: PostgresStore.silent)
                // The first use of each dead connection may fail (a failure that passes); a later one succeeds.
                try await eventually("admitted again after round \(round)", timeout: .seconds(20)) {
                    (try? await store.admitMessage(
                        sender: "a", at: Date(), limit: 100, window: 60, usingAllowance: false)) == .allowed
                }
                try await eventually("pressed again after round \(round)", timeout: .seconds(20)) {
                    (try? await store.recordPress(button: "door", at: Date(), historyLimit: 20)) != nil
                }
            }
            try await killer.close()
            try await store.close()
        }
    }
}
