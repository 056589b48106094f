import Foundation
import Testing
import TrellisCore
@testable import TrellisStore
@testable import TrellisStorePostgres
@testable import TrellisStoreSQLite
import TrellisTestSupport

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

/// Opens an SQLite store of `kind` (never PostgreSQL), for tests of what only SQLite has.
func withSQLiteStore(
    _ kind: StoreKind,
    deadLetterLimit: Int = StoreDefaults.deadLetterLimit,
    _ body: (SQLiteStore) async throws -> Void
) async throws {
    let directory = TemporaryDirectory()
    defer { directory.remove() }
    let store: SQLiteStore
    switch kind {
    case .inMemory, .postgres: store = try SQLiteStore.inMemory(deadLetterLimit: deadLetterLimit)
    case .directory: store = try SQLiteStore(directory: directory.path, deadLetterLimit: deadLetterLimit)
    }
    try await closing(store, body)
}

/// A fixed instant with millisecond precision, `seconds` after a base time.
func instant(_ seconds: Double) -> Date {
    Date(timeIntervalSince1970: 1_795_344_000 + seconds)
}

/// How many of `verdicts` are of each kind, so a burst's outcome is one expectation.
func tally(_ verdicts: some Sequence<SpamVerdict>) -> [SpamVerdict: Int] {
    verdicts.reduce(into: [:]) { $0[$1, default: 0] += 1 }
}
