import Foundation
import PostgresNIO
import Testing
@testable import TrellisStorePostgres
import TrellisTestSupport

/// What the server shows of a relay's connections in `pg_stat_activity`, which every role on the
/// server may read: `trellis` and a tag drawn at start, never its MQTT client id.
@Suite("PostgreSQL application name")
struct ApplicationNameTests {
    @Test("trellis and eight random hex digits, drawn once for the process")
    func tag() {
        #expect(PostgresStore.applicationName.wholeMatch(of: /trellis [0-9a-f]{8}/) != nil)
        #expect(PostgresStore.applicationName == PostgresStore.applicationName)
    }

    @Test(
        "pg_stat_activity shows the process's tag on every connection, and not the client id",
        .enabled(if: PostgresTestServer.isRequired))
    func shownByTheServer() async throws {
        try await PostgresTestServer.withDatabase { url in
            let owner = "trellis-k3mz8q2w7d9x4b6n5p1r"
            let store = try await PostgresStore.connect(url, owner: owner)
            _ = try await store.plants()
            let watcher = try await PostgresConnection.connect(
                configuration: PostgresStore.connectionConfiguration(url), id: 9, logger: PostgresStore.silent)
            let names = try await watcher.values(
                "SELECT application_name FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
                as: String.self, logger: PostgresStore.silent)
            try await watcher.close()
            try await store.close()
            #expect(!names.isEmpty && names.allSatisfy { $0 == PostgresStore.applicationName }, "\(names)")
            #expect(!names.contains { $0.contains("k3mz8q2w") }, "\(names)")
        }
    }
}
