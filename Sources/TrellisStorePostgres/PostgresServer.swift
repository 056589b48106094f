import Foundation
import Logging
import PostgresNIO
import TrellisCore
import TrellisStore

/// Statements about a PostgreSQL server rather than a Trellis state: making and dropping the
/// databases the tests and the benchmark use, each one their own.
public enum PostgresServer {
    /// Creates (after dropping any earlier one of that name) an empty database `name` on the
    /// server of `server`, connecting to `server`'s database; returns the new database's URL.
    public static func createDatabase(named name: String, on server: PostgresURL) async throws -> PostgresURL {
        guard isPlainName(name) else {
            throw StoreError(
                code: .operationFailed, message: "\(name) is not a plain database name (letters, digits and _)")
        }
        await dropDatabase(named: name, on: server)
        try await run("CREATE DATABASE \(name)", on: server)
        var url = server
        url.database = name
        return url
    }

    /// Drops database `name` if it exists, closing the connections still using it.
    public static func dropDatabase(named name: String, on server: PostgresURL) async {
        guard isPlainName(name) else { return }
        try? await run("DROP DATABASE IF EXISTS \(name) WITH (FORCE)", on: server)
    }

    /// Runs one statement on a connection of its own (`CREATE DATABASE` cannot run in a transaction).
    private static func run(_ statement: String, on server: PostgresURL) async throws {
        var configuration = PostgresConnection.Configuration(
            host: server.host, port: server.port, username: server.user, password: server.password,
            database: server.database, tls: .disable)
        configuration.options.connectTimeout = .seconds(10)
        let connection = try await PostgresConnection.connect(
            configuration: configuration, id: 1, logger: PostgresStore.silent)
        do {
            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: PostgresStore.silent)
        } catch {
            try? await connection.close()
            throw PostgresFailure.wrap(error, operation: statement)
        }
        try await connection.close()
    }

    /// A database name is not a bound value: only letters, digits and `_` go into the statement.
    private static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "_" }
    }
}
