import Foundation
import TrellisStore
import TrellisStorePostgres

/// The PostgreSQL server the tests use: the throwaway cluster `make test` starts
/// (`Tests/Postgres/cluster.sh`), named by `TRELLIS_TEST_POSTGRES_URL`. Each test gets a database
/// of its own, created from that URL's and dropped afterwards, so tests run in parallel without
/// seeing each other's rows.
public enum PostgresTestServer {
    /// The server's URL, nil when the tests run without one.
    public static var url: String? {
        let url = ProcessInfo.processInfo.environment["TRELLIS_TEST_POSTGRES_URL"] ?? ""
        return url.isEmpty ? nil : url
    }

    /// True when the PostgreSQL tests must run: a server is named, or this is CI (where a missing
    /// server is a failure of the set-up, not a reason to skip).
    public static var isRequired: Bool {
        url != nil || ProcessInfo.processInfo.environment["CI"] != nil
    }

    /// Creates an empty database and returns its URL.
    public static func createDatabase() async throws -> PostgresURL {
        guard let text = url else {
            throw StoreError(
                code: .cannotOpen,
                message: "TRELLIS_TEST_POSTGRES_URL is not set: run the tests with `make test`, "
                    + "or start a server with `make postgres`")
        }
        let name = "trellis_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20))"
        return try await PostgresServer.createDatabase(named: name, on: try PostgresURL(text))
    }

    /// Drops a database made by ``createDatabase()``, closing what still uses it.
    public static func dropDatabase(_ database: PostgresURL) async {
        guard let text = url, let base = try? PostgresURL(text), database.database.hasPrefix("trellis_test_") else {
            return
        }
        await PostgresServer.dropDatabase(named: database.database, on: base)
    }

    /// Runs `body` with a fresh database's URL, then drops the database.
    public static func withDatabase<T>(_ body: (PostgresURL) async throws -> T) async throws -> T {
        try await withTearDown(of: try await createDatabase(), { await dropDatabase($0) }, body)
    }
}
