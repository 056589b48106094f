import Foundation
import Testing
import TrellisTestSupport
import TrellisCore
@testable import TrellisStore
@testable import TrellisStoreSQLite

@Suite("DeliveryStore on SQLite")
struct DeliveryStoreTests {
    static func mark(_ id: Int) -> DeliveryMark {
        DeliveryMark(packetID: id, topic: "p2o/buttons/b1/press", payload: [])
    }

    /// A reading written behind while delivery `id` is in hand.
    static func handle(_ id: Int, in store: any TrellisStore) async throws {
        try await HandledDelivery.$current.withValue(mark(id)) {
            try await store.recordReading(
                sensor: "0x36", moisture: id % 10 + 1, temperature: 70, at: instant(Double(id)))
        }
    }

    @Test("a write made while a delivery is in hand commits its mark with it", arguments: StoreKind.allCases)
    func markCommittedWithChange(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            _ = try await HandledDelivery.$current.withValue(Self.mark(41)) {
                try await store.recordPress(button: "b1", at: instant(1), historyLimit: 20)
            }
            _ = try await store.recordPress(button: "b1", at: instant(2), historyLimit: 20)
            #expect(try await store.recentDeliveries(limit: 10) == [Self.mark(41)])
            #expect(try await store.button(id: "b1")?.total == 2)
        }
    }

    @Test("a read while a delivery is in hand leaves no mark")
    func readsLeaveNoMark() async throws {
        try await withStore(.inMemory) { store async throws in
            _ = try await HandledDelivery.$current.withValue(Self.mark(3)) { try await store.plants() }
            #expect(try await store.recentDeliveries(limit: 10).isEmpty)
        }
    }

    @Test(
        "marks come back oldest first, the last `limit` only; a repeated identifier moves to the end",
        arguments: StoreKind.allCases)
    func recentOrder(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            for id in [5, 6, 7, 5, 8] { try await Self.handle(id, in: store) }
            #expect(try await store.recentDeliveries(limit: 10) == [6, 7, 5, 8].map(Self.mark))
            #expect(try await store.recentDeliveries(limit: 2) == [5, 8].map(Self.mark))
        }
    }

    @Test("forgetting drops marks queued before it, and later marks are kept", arguments: StoreKind.bothStores)
    func forget(_ kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            try await Self.handle(1, in: store)
            try await store.forgetDeliveries()
            try await Self.handle(2, in: store)
            #expect(try await store.recentDeliveries(limit: 10) == [Self.mark(2)])
        }
    }

    @Test("marks survive closing and reopening the store")
    func durable() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let first = try SQLiteStore(directory: directory.path)
        try await Self.handle(9, in: first)
        try await first.close()
        let second = try SQLiteStore(directory: directory.path)
        #expect(try await second.recentDeliveries(limit: 4) == [Self.mark(9)])
        try await second.close()
    }
}
