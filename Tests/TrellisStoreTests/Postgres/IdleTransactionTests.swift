import Foundation
import PostgresNIO
import Synchronization
import Testing
@testable import TrellisStorePostgres
import TrellisTestSupport

/// A relay stopped in the middle of a transaction (SIGSTOP, a hang, a link cut) holds its locks
/// only until the server's idle-in-transaction limit ends its session: the other relays of its
/// share group wait that long, not for as long as it stays stopped, and the stopped relay's
/// transaction, once it runs again, fails cleanly and is tried again on a new connection.
@Suite(
    "PostgreSQL sessions idle in a transaction", .enabled(if: PostgresTestServer.isRequired), .timeLimit(.minutes(1)))
struct IdleTransactionTests {
    /// How many times a transaction's body ran, and whether the first run may go on.
    final class Runs: Sendable {
        let count = Atomic(0)
        let released = Atomic(false)
    }

    @Test("every connection of the store starts with the limit")
    func setting() async throws {
        try await PostgresTestServer.withDatabase { url in
            let store = try await PostgresStore.connect(url, owner: "r1")
            let shown = try await store.client.withConnection { connection in
                try await connection.values(
                    "SHOW idle_in_transaction_session_timeout", as: String.self, logger: PostgresStore.silent)
            }
            let single = try await BoundedStatementsTests.connect(url)
            let shownAlone = try await single.values(
                "SHOW idle_in_transaction_session_timeout", as: String.self, logger: PostgresStore.silent)
            try await single.close()
            try await store.close()
            #expect(shown == ["\(PostgresStore.idleInTransactionLimit)s"])
            #expect(shownAlone == shown)
        }
    }

    @Test("a holder stopped inside its transaction keeps a shared lock for the limit, not for good")
    func stoppedHolder() async throws {
        try await withTwoRelays { _, first, second in
            let runs = Runs()
            // The first relay takes the lock and then does nothing, as a paused process does: its
            // session sits idle inside the transaction.
            let holder = Task {
                try await first.withSharedLock("p2o/buttons/b0/state") {
                    let run = runs.count.add(1, ordering: .sequentiallyConsistent).newValue
                    while run == 1 && !runs.released.load(ordering: .sequentiallyConsistent) {
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    return run
                }
            }
            try await eventually("the first holds the lock") { runs.count.load(ordering: .sequentiallyConsistent) == 1 }
            let asked = ContinuousClock.now
            let taken = try await second.withSharedLock("p2o/buttons/b0/state") { ContinuousClock.now }
            let waited = taken - asked
            // The lock came free when the server ended the idle session, within the limit and the
            // second's retry after its own statement limit.
            #expect(waited < .seconds(PostgresStore.idleInTransactionLimit + 12), "\(waited)")
            #expect(waited > .seconds(PostgresStore.idleInTransactionLimit - 2), "\(waited)")
            // Running again, the first finds its session gone and runs its work again on a new one.
            runs.released.store(true, ordering: .sequentiallyConsistent)
            #expect(try await holder.value == 2)
        }
    }
}
