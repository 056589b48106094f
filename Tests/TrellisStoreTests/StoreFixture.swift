import Foundation
import Testing
@testable import TrellisStore
import TrellisTestSupport

/// Where a test store lives: SQLite in memory or in a directory (the same SQL over different
/// connection types), or a fresh database on the test PostgreSQL server. The store tests are one
/// table run against every kind.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case inMemory
    case directory
    case postgres

    /// Every kind; PostgreSQL when a test server is named (always under `make test` and in CI).
    static var allCases: [StoreKind] {
        PostgresTestServer.isRequired ? [.inMemory, .directory, .postgres] : [.inMemory, .directory]
    }

    /// One SQLite kind and PostgreSQL: for tests whose SQL does not depend on the connection type.
    static var bothStores: [StoreKind] {
        PostgresTestServer.isRequired ? [.inMemory, .postgres] : [.inMemory]
    }

    var testDescription: String { rawValue }
}

/// A fresh temporary directory, removed by ``remove()``.
struct TemporaryDirectory: Sendable {
    let path: String

    init() {
        path = (NSTemporaryDirectory() as NSString)
            .appendingPathComponent("trellis-store-\(UUID().uuidString)")
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Opens a store of `kind`, runs `body`, then closes the store and removes its files or database.
func withStore(
    _ kind: StoreKind,
    deadLetterLimit: Int = SQLiteStore.defaultDeadLetterLimit,
    _ body: (any TrellisStore) async throws -> Void
) async throws {
    if kind == .postgres {
        try await PostgresTestServer.withDatabase { url in
            let store = try await PostgresStore.connect(url, owner: "test-relay", deadLetterLimit: deadLetterLimit)
            try await run(body, on: store)
        }
        return
    }
    try await withSQLiteStore(kind, deadLetterLimit: deadLetterLimit, body)
}

/// Opens an SQLite store of `kind` (never PostgreSQL), for tests of what only SQLite has.
func withSQLiteStore(
    _ kind: StoreKind,
    deadLetterLimit: Int = SQLiteStore.defaultDeadLetterLimit,
    _ body: (SQLiteStore) async throws -> Void
) async throws {
    let directory = TemporaryDirectory()
    defer { directory.remove() }
    let store: SQLiteStore
    switch kind {
    case .inMemory, .postgres: store = try SQLiteStore.inMemory(deadLetterLimit: deadLetterLimit)
    case .directory: store = try SQLiteStore(directory: directory.path, deadLetterLimit: deadLetterLimit)
    }
    try await run(body, on: store)
}

/// Runs `body` on `store`, then closes it whether `body` threw or not.
private func run<Store: TrellisStore>(_ body: (Store) async throws -> Void, on store: Store) async throws {
    do {
        try await body(store)
        try await store.close()
    } catch {
        try? await store.close()
        throw error
    }
}

/// A fixed instant with millisecond precision, `seconds` after a base time.
func instant(_ seconds: Double) -> Date {
    Date(timeIntervalSince1970: 1_795_344_000 + seconds)
}
