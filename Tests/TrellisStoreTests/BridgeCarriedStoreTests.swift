import Foundation
import Testing
import TrellisCore
import TrellisStore
import TrellisStoreSQLite
import TrellisTestSupport

/// The ids a bridge's receiver carried in, on every store kind as one table: read back newest last,
/// bridges apart, the oldest forgotten past the bound, kept across a reopening and in a state copy.
@Suite("Bridge: ids carried in, on every store")
struct BridgeCarriedStoreTests {
    static func id(_ sequence: Int, from origin: String = "office:cloud") -> BridgeMessageID {
        BridgeMessageID(origin: origin, sequence: Int64(sequence))
    }

    @Test("recorded ids read back oldest first, the newest `limit`; each bridge's apart", arguments: StoreKind.allCases)
    func recorded(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            #expect(try await store.carriedIn(bridge: "cloud", limit: 10) == [])
            for sequence in [3, 1, 2] {
                try await store.recordCarriedIn(bridge: "cloud", id: Self.id(sequence), keep: 10)
            }
            try await store.recordCarriedIn(bridge: "other", id: Self.id(9, from: "barn/r1:up"), keep: 10)
            #expect(try await store.carriedIn(bridge: "cloud", limit: 10) == [3, 1, 2].map { Self.id($0) })
            #expect(try await store.carriedIn(bridge: "cloud", limit: 2) == [1, 2].map { Self.id($0) })
            #expect(try await store.carriedIn(bridge: "other", limit: 10) == [Self.id(9, from: "barn/r1:up")])
        }
    }

    @Test(
        "past `keep`, the oldest of a bridge are forgotten now and then; another bridge keeps its own",
        arguments: StoreKind.allCases)
    func bounded(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.recordCarriedIn(bridge: "other", id: Self.id(0), keep: 10)
            let count = Int(bridgeCarriedPruneEvery) * 2 + 10
            for sequence in 1...count {
                try await store.recordCarriedIn(bridge: "cloud", id: Self.id(sequence), keep: 10)
            }
            let kept = try await store.carriedIn(bridge: "cloud", limit: count)
            // At most `keep` plus the rows recorded since the last forgetting; always the newest.
            #expect(kept.count >= 10 && kept.count <= 10 + Int(bridgeCarriedPruneEvery), "\(kept.count)")
            #expect(kept == ((count - kept.count + 1)...count).map { Self.id($0) })
            #expect(kept.count < count, "nothing was forgotten")
            #expect(try await store.carriedIn(bridge: "other", limit: 10) == [Self.id(0)])
        }
    }

    @Test(
        "the ids survive reopening the store",
        arguments: [StoreKind.directory, .postgres].filter(StoreKind.allCases.contains))
    func durable(kind: StoreKind) async throws {
        try await withStorePlace(kind) { open in
            try await closing(try await open()) { store async throws in
                try await store.recordCarriedIn(bridge: "cloud", id: Self.id(7), keep: 10)
            }
            try await closing(try await open()) { store async throws in
                #expect(try await store.carriedIn(bridge: "cloud", limit: 10) == [Self.id(7)])
            }
        }
    }

    @Test("a state copy carries the ids; the copy records after them", arguments: StoreKind.bothStores)
    func copied(kind: StoreKind) async throws {
        let source = try SQLiteStore.inMemory()
        for sequence in 1...3 { try await source.recordCarriedIn(bridge: "cloud", id: Self.id(sequence), keep: 10) }
        let dump = try await source.exportState()
        try await source.close()
        try await withStore(kind) { target in
            let importing = try #require(target as? any StateImporting)
            try await importing.importState(dump, replacing: false)
            try await target.recordCarriedIn(bridge: "cloud", id: Self.id(4), keep: 10)
            #expect(try await target.carriedIn(bridge: "cloud", limit: 10) == (1...4).map { Self.id($0) })
        }
    }
}
