import Foundation
import GRDB
import Logging
import PostgresNIO
import Testing
import TrellisCore
import TrellisStore
import TrellisStorePostgres
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

    @Test(
        "ids the store refuses are skipped under a savepoint; the batch's other changes commit",
        arguments: [StoreKind.directory, .postgres].filter(StoreKind.allCases.contains))
    func refusedIDs(kind: StoreKind) async throws {
        try await Self.withDroppedCarriedTable(kind) { store in
            try await store.recordCarriedIn(bridge: "cloud", id: Self.id(1), forgettingPast: nil)
            try await store.enqueueForward(
                bridge: "cloud", rule: "sensors/#", topic: "site/sensors/a", payload: Array("1".utf8), qos: 1,
                retain: false, at: Date())
            try await store.recordCarriedIn(bridge: "cloud", id: Self.id(2), forgettingPast: 1)
            // The batch commits: the forward is kept, and the store is healthy for what comes next.
            try await store.flush()
            #expect(try await store.forwardBacklog(bridge: "cloud").messages == 1)
            await #expect(throws: (any Error).self) { try await store.carriedIn(bridge: "cloud", limit: 10) }
            try await store.enqueueForward(
                bridge: "cloud", rule: "sensors/#", topic: "site/sensors/b", payload: Array("2".utf8), qos: 1,
                retain: false, at: Date())
            try await store.flush()
            #expect(try await store.forwardBacklog(bridge: "cloud").messages == 2)
        }
    }

    /// A store of `kind` whose table of ids was dropped behind its back (a damaged state) by a
    /// connection of the test's own.
    static func withDroppedCarriedTable(_ kind: StoreKind, _ body: (any TrellisStore) async throws -> Void)
        async throws
    {
        switch kind {
        case .postgres:
            try await PostgresTestServer.withDatabase { url in
                let store = try await PostgresStore.connect(url, owner: "test-relay")
                try await closing(store) { store async throws in
                    let raw = try await BoundedStatementsTests.connect(url)
                    defer { Task { try? await raw.close() } }
                    try await raw.query("DROP TABLE bridge_carried", logger: Logger(label: "test.raw"))
                    try await body(store)
                }
            }
        default:
            let path = (NSTemporaryDirectory() as NSString).appendingPathComponent("trellis-store-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(atPath: path) }
            try await closing(try SQLiteStore(directory: path)) { store async throws in
                let raw = try DatabaseQueue(path: path + "/" + SQLiteStore.fileName)
                try await raw.write { try $0.execute(sql: "DROP TABLE bridge_carried") }
                try raw.close()
                try await body(store)
            }
        }
    }
}
