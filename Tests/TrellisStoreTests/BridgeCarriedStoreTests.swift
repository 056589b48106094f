import Foundation
import Testing
import TrellisCore
import TrellisStore
import TrellisStoreSQLite
import TrellisTestSupport

/// The ids a bridge's receiver carried in, on every store kind as one table: written behind and
/// read back newest last once committed, bridges apart, the oldest forgotten when asked, kept across
/// a reopening and in a state copy.
@Suite("Bridge: ids carried in, on every store")
struct BridgeCarriedStoreTests {
    static func id(_ sequence: Int, from origin: String = "office:cloud") -> BridgeMessageID {
        BridgeMessageID(origin: origin, sequence: Int64(sequence))
    }

    /// Records `sequences` for `bridge` and waits for the write-behind to commit them.
    static func record(_ sequences: [Int], bridge: String = "cloud", in store: any TrellisStore) async throws {
        for sequence in sequences {
            try await store.recordCarriedIn(bridge: bridge, id: Self.id(sequence), forgettingPast: nil)
        }
        try await store.flush()
    }

    @Test("recorded ids read back oldest first, the newest `limit`; each bridge's apart", arguments: StoreKind.allCases)
    func recorded(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            #expect(try await store.carriedIn(bridge: "cloud", limit: 10) == [])
            try await Self.record([3, 1, 2], in: store)
            try await store.recordCarriedIn(bridge: "other", id: Self.id(9, from: "barn/r1:up"), forgettingPast: nil)
            try await store.flush()
            #expect(try await store.carriedIn(bridge: "cloud", limit: 10) == [3, 1, 2].map { Self.id($0) })
            #expect(try await store.carriedIn(bridge: "cloud", limit: 2) == [1, 2].map { Self.id($0) })
            #expect(try await store.carriedIn(bridge: "other", limit: 10) == [Self.id(9, from: "barn/r1:up")])
        }
    }

    @Test(
        "a record that forgets keeps the bridge's newest `keep` with itself; another bridge keeps its own",
        arguments: StoreKind.allCases)
    func forgetting(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await Self.record([0], bridge: "other", in: store)
            try await Self.record(Array(1...20), in: store)
            try await store.recordCarriedIn(bridge: "cloud", id: Self.id(21), forgettingPast: 5)
            try await store.flush()
            #expect(try await store.carriedIn(bridge: "cloud", limit: 50) == (17...21).map { Self.id($0) })
            #expect(try await store.carriedIn(bridge: "other", limit: 10) == [Self.id(0)])
        }
    }

    @Test(
        "the ids survive reopening the store",
        arguments: [StoreKind.directory, .postgres].filter(StoreKind.allCases.contains))
    func durable(kind: StoreKind) async throws {
        try await withStorePlace(kind) { open in
            try await closing(try await open()) { store async throws in try await Self.record([7], in: store) }
            try await closing(try await open()) { store async throws in
                #expect(try await store.carriedIn(bridge: "cloud", limit: 10) == [Self.id(7)])
            }
        }
    }

    @Test("a state copy carries the ids; the copy records after them", arguments: StoreKind.bothStores)
    func copied(kind: StoreKind) async throws {
        let source = try SQLiteStore.inMemory()
        try await Self.record([1, 2, 3], in: source)
        let dump = try await source.exportState()
        try await source.close()
        try await withStore(kind) { target in
            let importing = try #require(target as? any StateImporting)
            try await importing.importState(dump, replacing: false)
            try await Self.record([4], in: target)
            #expect(try await target.carriedIn(bridge: "cloud", limit: 10) == (1...4).map { Self.id($0) })
        }
    }
}
