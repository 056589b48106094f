import Foundation
import Testing
import TrellisStore
import TrellisStorePostgres
import TrellisStoreSQLite

/// A backend a test runs on: SQLite in memory or in a directory (the same SQL over different
/// connection types), or a fresh database on the test PostgreSQL server. The store tests and the
/// relay's engine tests are tables run against every kind.
public enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case inMemory
    case directory
    case postgres

    /// Every kind; PostgreSQL when a test server is named (always under `make test` and in CI).
    public static var allCases: [StoreKind] {
        PostgresTestServer.isRequired ? [.inMemory, .directory, .postgres] : [.inMemory, .directory]
    }

    /// One SQLite kind and PostgreSQL: for tests whose SQL does not depend on the connection type.
    public static var bothStores: [StoreKind] {
        PostgresTestServer.isRequired ? [.inMemory, .postgres] : [.inMemory]
    }

    public var testDescription: String { rawValue }
}

/// Opens a store of `kind`, runs `body`, then closes the store and removes its files or database.
public func withStore<T>(
    _ kind: StoreKind,
    deadLetterLimit: Int = StoreDefaults.deadLetterLimit,
    _ body: (any TrellisStore) async throws -> T
) async throws -> T {
    switch kind {
    case .postgres:
        return try await PostgresTestServer.withDatabase { url in
            let store = try await PostgresStore.connect(url, owner: "test-relay", deadLetterLimit: deadLetterLimit)
            return try await closing(store, body)
        }
    case .inMemory:
        return try await closing(try SQLiteStore.inMemory(deadLetterLimit: deadLetterLimit), body)
    case .directory:
        let path = (NSTemporaryDirectory() as NSString).appendingPathComponent("trellis-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await closing(try SQLiteStore(directory: path, deadLetterLimit: deadLetterLimit), body)
    }
}

/// Runs `body` with a place for a store of `kind` that can be opened more than once, as a relay
/// restarted opens its state again: a directory for SQLite (in memory has no second opening, so it
/// is a directory too), a database for PostgreSQL. `body` is given the opener; each store it opens
/// is the caller's to close. The place is removed at the end.
public func withStorePlace<T>(
    _ kind: StoreKind, _ body: (@escaping @Sendable () async throws -> any TrellisStore) async throws -> T
) async throws -> T {
    switch kind {
    case .postgres:
        return try await PostgresTestServer.withDatabase { url in
            try await body { try await PostgresStore.connect(url, owner: "test-relay") }
        }
    case .inMemory, .directory:
        let path = (NSTemporaryDirectory() as NSString).appendingPathComponent("trellis-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await body { try SQLiteStore(directory: path) }
    }
}
