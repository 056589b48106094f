import Testing
import TrellisTestSupport
@testable import TrellisStore

/// What the message loop asks a store before it overlaps read requests in tasks of their own.
@Suite("Whether a store's reads wait on a server")
struct StoreReadsWaitTests {
    /// Only PostgreSQL's reads are round trips worth overlapping; SQLite answers in the process,
    /// where a task per read costs more than it saves (docs/benchmark.md).
    @Test("only PostgreSQL's reads wait on a server", arguments: StoreKind.allCases)
    func readsWaitOnServer(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            #expect(store.readsWaitOnServer == (kind == .postgres))
        }
    }
}
