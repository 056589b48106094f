import Foundation
import Testing
@testable import TrellisStore

/// Where a test store lives: both kinds run the same SQL, with different connection types.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case inMemory
    case directory

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

/// Opens a store of `kind`, runs `body`, then closes the store and removes its files.
func withStore(
    _ kind: StoreKind,
    deadLetterLimit: Int = SQLiteStore.defaultDeadLetterLimit,
    _ body: (SQLiteStore) async throws -> Void
) async throws {
    let directory = TemporaryDirectory()
    defer { directory.remove() }
    let store: SQLiteStore
    switch kind {
    case .inMemory: store = try SQLiteStore.inMemory(deadLetterLimit: deadLetterLimit)
    case .directory: store = try SQLiteStore(directory: directory.path, deadLetterLimit: deadLetterLimit)
    }
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
