import Foundation
import Logging
import PostgresNIO
import TrellisStore

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
            throw StoreError(code: .cannotOpen, message: "TRELLIS_TEST_POSTGRES_URL is not set: run the tests with `make test`, "
                + "or start a server with `make postgres`")
        }
        var base = try PostgresURL(text)
        let name = "trellis_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20))"
        try await administer(base, "CREATE DATABASE \(name)")
        base.database = name
        return base
    }

    /// Drops a database made by ``createDatabase()``, closing what still uses it.
    public static func dropDatabase(_ database: PostgresURL) async {
        guard let text = url, let base = try? PostgresURL(text), database.database.hasPrefix("trellis_test_") else { return }
        try? await administer(base, "DROP DATABASE IF EXISTS \(database.database) WITH (FORCE)")
    }

    /// Runs one statement on a connection of its own to `base`.
    private static func administer(_ base: PostgresURL, _ statement: String) async throws {
        var configuration = PostgresConnection.Configuration(
            host: base.host, port: base.port, username: base.user, password: base.password, database: base.database,
            tls: .disable)
        configuration.options.connectTimeout = .seconds(10)
        let logger = Logger(label: "trellis.test.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        do {
            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }

    /// Runs `body` with a fresh database's URL, then drops the database.
    public static func withDatabase<T>(_ body: (PostgresURL) async throws -> T) async throws -> T {
        let database = try await createDatabase()
        do {
            let result = try await body(database)
            await dropDatabase(database)
            return result
        } catch {
            await dropDatabase(database)
            throw error
        }
    }
}
