import Foundation
import GRDBSQLite
import Synchronization
import Testing
import TrellisCore
import TrellisStore
import TrellisStoreSQLite
import TrellisTestSupport

/// The bridge's queue on every store kind, as one table: kept in order, read after an id, deleted
/// once acknowledged, bridges apart, and kept across a reopening.
@Suite("Bridge queue on every store")
struct BridgeStoreTests {
    @Test(
        "kept in order, read in batches after an id, deleted by id; each bridge's apart", arguments: StoreKind.allCases)
    func queue(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            for index in 1...5 {
                try await store.enqueueForward(
                    bridge: "cloud", rule: "site/#", topic: "site/s\(index)", payload: [UInt8(index), 0, 0xFF],
                    qos: index % 2,
                    retain: index == 3, at: Date())
            }
            try await store.enqueueForward(
                bridge: "other", rule: "site/#", topic: "x", payload: [], qos: 1, retain: false, at: Date())
            // Written behind: read once committed.
            try await store.flush()
            let first = try await store.forwards(bridge: "cloud", after: 0, limit: 3)
            #expect(first.map(\.topic) == ["site/s1", "site/s2", "site/s3"])
            #expect(first.map(\.payload) == [[1, 0, 0xFF], [2, 0, 0xFF], [3, 0, 0xFF]])
            #expect(first.map(\.qos) == [1, 0, 1] && first.map(\.retain) == [false, false, true])
            let rest = try await store.forwards(bridge: "cloud", after: try #require(first.last?.id), limit: 10)
            #expect(rest.map(\.topic) == ["site/s4", "site/s5"])
            #expect(try await store.forwardBacklog(bridge: "cloud") == (5, 15))

            try await store.deleteForwards(bridge: "cloud", ids: first.map(\.id))
            #expect(
                try await store.forwards(bridge: "cloud", after: 0, limit: 10).map(\.topic) == ["site/s4", "site/s5"])
            #expect(try await store.forwards(bridge: "other", after: 0, limit: 10).map(\.topic) == ["x"])
            // Another bridge's ids are not this one's to delete.
            try await store.deleteForwards(bridge: "other", ids: rest.map(\.id))
            #expect(try await store.forwardBacklog(bridge: "cloud") == (2, 6))
        }
    }

    /// Ten messages of 100 bytes on `cloud`, `t/0` … `t/9`, one a minute from the returned time,
    /// kept by the rule `a/#` (even) and `b/#` (odd) in turn.
    static func tenMessages(in store: any TrellisStore) async throws -> Date {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for index in 0..<10 {
            try await store.enqueueForward(
                bridge: "cloud", rule: index % 2 == 0 ? "a/#" : "b/#", topic: "t/\(index)",
                payload: Array(repeating: UInt8(index), count: 100), qos: 1,
                retain: false, at: start.addingTimeInterval(Double(index) * 60))
        }
        try await store.flush()
        return start
    }

    @Test(
        "held to its bounds, oldest first: by age, then by bytes with the newest kept; other bridges untouched",
        arguments: StoreKind.allCases)
    func bounds(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let start = try await Self.tenMessages(in: store)
            try await store.enqueueForward(
                bridge: "other", rule: "site/#", topic: "old", payload: [1], qos: 1, retain: false,
                at: start.addingTimeInterval(-3600))
            try await store.flush()
            // Within both bounds: nothing goes.
            let half = QueuedForwards(messages: 5, bytes: 500)
            #expect(
                try await store.trimForwards(bridge: "cloud", maxBytes: 1_000, storedBefore: start)
                    == ForwardTrim(
                        byAge: 0, byBytes: 0, messages: 10, bytes: 1_000, oldest: start,
                        rules: ["a/#": ForwardTrim.Rule(left: half), "b/#": ForwardTrim.Rule(left: half)]))
            #expect(try await store.forwardBacklogByRule(bridge: "cloud") == ["a/#": half, "b/#": half])
            // Kept before minute 3: three go for their age (t/0 and t/2 of a/#, t/1 of b/#); then 450
            // bytes keep the newest four (t/4 of a/#, t/3 and t/5 of b/# go).
            let trim = try await store.trimForwards(
                bridge: "cloud", maxBytes: 450, storedBefore: start.addingTimeInterval(180))
            let two = QueuedForwards(messages: 2, bytes: 200)
            #expect(
                trim
                    == ForwardTrim(
                        byAge: 3, byBytes: 3, messages: 4, bytes: 400, oldest: start.addingTimeInterval(360),
                        rules: [
                            "a/#": ForwardTrim.Rule(byAge: 2, byBytes: 1, left: two),
                            "b/#": ForwardTrim.Rule(byAge: 1, byBytes: 2, left: two)
                        ])
            )
            #expect(
                try await store.trimForwards(bridge: "none", maxBytes: 1, storedBefore: start)
                    == ForwardTrim(byAge: 0, byBytes: 0, messages: 0, bytes: 0, oldest: nil))
            #expect(
                try await store.forwards(bridge: "cloud", after: 0, limit: 20).map(\.topic)
                    == ["t/6", "t/7", "t/8", "t/9"])
            #expect(try await store.forwards(bridge: "other", after: 0, limit: 5).map(\.topic) == ["old"])
            #expect(try await store.oldestForward(bridge: "cloud") == start.addingTimeInterval(360))
            #expect(try await store.oldestForward(bridge: "none") == nil)
        }
    }

    @Test("held messages are spared by both bounds, kept past them and not counted", arguments: StoreKind.allCases)
    func spared(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let start = try await Self.tenMessages(in: store)
            let held = try await store.forwards(bridge: "cloud", after: 0, limit: 2).map(\.id)
            // Before minute 3: t/0 and t/1 are held, so only t/2 goes for its age; then 450 bytes:
            // t/9 … t/6 fit, t/5, t/4 and t/3 go, the held t/1 and t/0 stay past the bound.
            let trim = try await store.trimForwards(
                bridge: "cloud", maxBytes: 450, storedBefore: start.addingTimeInterval(180), sparing: held)
            let three = QueuedForwards(messages: 3, bytes: 300)
            #expect(
                trim
                    == ForwardTrim(
                        byAge: 1, byBytes: 3, messages: 6, bytes: 600, oldest: start,
                        rules: [
                            "a/#": ForwardTrim.Rule(byAge: 1, byBytes: 1, left: three),
                            "b/#": ForwardTrim.Rule(byAge: 0, byBytes: 2, left: three)
                        ]))
            #expect(
                try await store.forwards(bridge: "cloud", after: 0, limit: 20).map(\.topic)
                    == ["t/0", "t/1", "t/6", "t/7", "t/8", "t/9"])
        }
    }

    @Test(
        "a committed batch that kept messages for a bridge tells its forwarder; other batches and bridges do not",
        arguments: StoreKind.allCases)
    func keptTellsTheForwarder(kind: StoreKind) async throws {
        final class Told: Sendable {
            private let count = Atomic(0)
            func tell() { count.add(1, ordering: .relaxed) }
            var value: Int { count.load(ordering: .relaxed) }
        }
        try await withStore(kind) { store in
            let told = Told()
            let observation = store.observeForwardsKept(bridge: "cloud") { told.tell() }
            try await store.recordReading(sensor: "0x10", moisture: 5, temperature: 70, at: Date())
            try await store.enqueueForward(
                bridge: "other", rule: "x/#", topic: "x/1", payload: [], qos: 1, retain: false, at: Date())
            try await store.flush()
            #expect(told.value == 0, "a reading and another bridge's message")
            try await store.enqueueForward(
                bridge: "cloud", rule: "s/#", topic: "s/1", payload: [1], qos: 1, retain: false, at: Date())
            try await store.flush()
            #expect(told.value == 1, "told once the batch committed, before the flush returned")
            observation.end()
            try await store.enqueueForward(
                bridge: "cloud", rule: "s/#", topic: "s/2", payload: [2], qos: 1, retain: false, at: Date())
            try await store.flush()
            #expect(told.value == 1, "ended: told nothing more")
        }
    }

    @Test("SQLite: a trim within the bounds reads beside another connection's write lock; past a bound, it deletes")
    func trimBesideWriter() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await closing(try SQLiteStore(directory: directory.path)) { store async throws in
            let start = try await Self.tenMessages(in: store)
            var other: OpaquePointer?
            try #require(sqlite3_open(directory.path + "/" + SQLiteStore.fileName, &other) == SQLITE_OK)
            defer { sqlite3_close(other) }
            try #require(sqlite3_exec(other, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
            // The trim of each second while the write-behind commits: it takes the write lock from no one
            // (before, it waited for the lock and failed after the store's busy timeout of 5 s).
            let within = try await store.trimForwards(bridge: "cloud", maxBytes: 1_000, storedBefore: start)
            #expect(within.byAge == 0 && within.byBytes == 0 && within.messages == 10 && within.bytes == 1_000)
            #expect(within.oldest == start)
            #expect(sqlite3_exec(other, "COMMIT", nil, nil, nil) == SQLITE_OK)
            let past = try await store.trimForwards(bridge: "cloud", maxBytes: 450, storedBefore: start)
            #expect(past.byAge == 0 && past.byBytes == 6 && past.messages == 4 && past.bytes == 400)
            #expect(try await store.forwardBacklog(bridge: "cloud") == (4, 400))
        }
    }

    @Test(
        "the queue survives reopening the store",
        arguments: [StoreKind.directory, .postgres].filter(StoreKind.allCases.contains))
    func durable(kind: StoreKind) async throws {
        try await withStorePlace(kind) { open in
            try await closing(try await open()) { store async throws in
                try await store.enqueueForward(
                    bridge: "cloud", rule: "site/#", topic: "site/a", payload: Array("kept".utf8), qos: 1,
                    retain: false, at: Date())
            }
            try await closing(try await open()) { store async throws in
                #expect(
                    try await store.forwards(bridge: "cloud", after: 0, limit: 5).map(\.payload) == [Array("kept".utf8)]
                )
            }
        }
    }

    @Test(
        "the state's identity: the same on reopening, another for another state",
        arguments: [StoreKind.directory, .postgres].filter(StoreKind.allCases.contains))
    func identity(kind: StoreKind) async throws {
        try await withStorePlace(kind) { open in
            let first = try await closing(try await open()) { store async throws in try await store.stateIdentity() }
            let again = try await closing(try await open()) { store async throws in try await store.stateIdentity() }
            #expect(first.count == 12 && first == again, "\(first), \(again)")
            let other = try await withStore(kind) { other async throws in try await other.stateIdentity() }
            #expect(other.count == 12 && other != first)
        }
    }

    @Test(
        "a state copy carries the queue with its ids and rules; the copy's next message comes after them",
        arguments: StoreKind.bothStores)
    func copied(kind: StoreKind) async throws {
        let source = try SQLiteStore.inMemory()
        for index in 0..<4 {
            try await source.enqueueForward(
                bridge: "cloud", rule: index % 2 == 0 ? "a/#" : "b/#", topic: "t/\(index)", payload: [UInt8(index)],
                qos: index % 2, retain: index == 3, at: Date(timeIntervalSince1970: 1_800_000_000 + Double(index)))
        }
        try await source.flush()
        let kept = try await source.forwards(bridge: "cloud", after: 0, limit: 10)
        try await source.deleteForwards(bridge: "cloud", ids: [kept[0].id])
        let waiting = Array(kept.dropFirst())
        let dump = try await source.exportState()
        try await source.close()
        try await withStore(kind) { target in
            let importing = try #require(target as? any StateImporting)
            try await importing.importState(dump, replacing: false)
            // The same ids: a receiver that saw one before the copy drops its copy after.
            #expect(try await target.forwards(bridge: "cloud", after: 0, limit: 10) == waiting)
            #expect(
                try await target.forwardBacklogByRule(bridge: "cloud")
                    == ["a/#": QueuedForwards(messages: 1, bytes: 1), "b/#": QueuedForwards(messages: 2, bytes: 2)])
            try await target.enqueueForward(
                bridge: "cloud", rule: "a/#", topic: "t/4", payload: [4], qos: 1, retain: false, at: Date())
            try await target.flush()
            let next = try await target.forwards(bridge: "cloud", after: try #require(waiting.last?.id), limit: 10)
            #expect(next.map(\.topic) == ["t/4"])
        }
    }
}
