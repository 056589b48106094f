import Foundation
import PostgresNIO
import Synchronization
import Testing
@testable import TrellisStorePostgres
import TrellisTestSupport

/// Leases over PostgreSQL, as the relays of a share group use them for a bridge's link: one holder
/// at a time, the lease free again once its holder's work ends, and the work cancelled when the
/// holder's session is ended under it, so that another relay can take over.
@Suite("Store leases over PostgreSQL", .enabled(if: PostgresTestServer.isRequired), .timeLimit(.minutes(1)))
struct StoreLeasesTests {
    /// A flag a test sets from a lease's work and waits on.
    final class Flag: Sendable {
        let value = Atomic(false)
        func set() { value.store(true, ordering: .sequentiallyConsistent) }
        var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
    }

    @Test("one holder at a time: a second store is refused while the first works, and takes the lease after")
    func oneHolder() async throws {
        try await withTwoRelays { _, first, second in
            let holding = Flag()
            let release = AsyncStream<Void>.makeStream()
            let term = Task {
                try await first.withLease("bridge/cloud/out") {
                    holding.set()
                    for await _ in release.stream { break }
                }
            }
            try await eventually("the first holds the lease") { holding.isSet }
            #expect(try await second.withLease("bridge/cloud/out") { Issue.record("ran beside its holder") } == false)
            // Another name is another lease.
            let other = Flag()
            #expect(try await second.withLease("bridge/cloud/in") { other.set() })
            #expect(other.isSet)
            release.continuation.yield()
            #expect(try await term.value)
            let taken = Flag()
            #expect(try await second.withLease("bridge/cloud/out") { taken.set() })
            #expect(taken.isSet)
        }
    }

    @Test("the holder's session ended by the server: its work is cancelled and another store takes the lease")
    func sessionEnded() async throws {
        try await withTwoRelays { url, first, second in
            let killer = try await BoundedStatementsTests.connect(url)
            let holding = Flag()
            let cancelled = Flag()
            let term = Task {
                try await first.withLease("bridge/cloud/out") {
                    holding.set()
                    while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(50)) }
                    cancelled.set()
                }
            }
            try await eventually("the first holds the lease") { holding.isSet }
            _ = try await killer.query(
                """
                SELECT pg_terminate_backend(pid) FROM pg_locks
                WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
                AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                """, logger: PostgresStore.silent)
            try await eventually("the holder's work cancelled", timeout: .seconds(20)) { cancelled.isSet }
            _ = try? await term.value
            let taken = Flag()
            try await eventually("the second takes the lease", timeout: .seconds(20)) {
                try await second.withLease("bridge/cloud/out") { taken.set() }
            }
            #expect(taken.isSet)
            try await killer.close()
        }
    }
}
