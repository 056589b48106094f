import Foundation
import GRDBSQLite
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisStoreSQLite
import TrellisTestSupport

/// Steps that exactness depends on are retried until they succeed, never skipped: a stale
/// delivery mark could make Trellis drop a new message as a redelivery.
@Suite("Start-up steps are retried, not skipped")
struct StartupStepRetryTests {
    static func press(id: Int, connection: Int, resumed: Bool) -> MQTTMessage {
        MQTTMessage(
            topic: "p2o/buttons/door/press", payload: [], qos: .atLeastOnce,
            delivery: MQTTDelivery(packetID: id, connection: connection, sessionResumed: resumed))
    }

    @Test("a new session's first message waits while the old marks cannot be forgotten (write lock held elsewhere)")
    func forgetRetriedUnderLock() async throws {
        let directory = (NSTemporaryDirectory() as NSString).appendingPathComponent("trellis-forget-\(UUID())")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore(directory: directory)
        let lines = CapturedLog()
        let engine = Relay.engine(store: store, settings: RelaySettings(), logger: lines.logger)
        _ = await engine.process(Self.press(id: 1, connection: 1, resumed: false), at: Date())
        #expect(try await store.recentDeliveries(limit: 10).map(\.packetID) == [1])

        var other: OpaquePointer?
        #expect(sqlite3_open(directory + "/" + SQLiteStore.fileName, &other) == SQLITE_OK)
        #expect(sqlite3_exec(other, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
        // The same identifier and payload on a new session: a new press, not a redelivery.
        let handling = Task { await engine.process(Self.press(id: 1, connection: 2, resumed: false), at: Date()) }
        let deadline = ContinuousClock.now + .seconds(60)
        while !lines.contains("could not forget the deliveries of the previous session")
            && ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(lines.contains("SQLITE_BUSY"))
        #expect(try await store.button(id: "door")?.total == 1, "the message waits until the marks are forgotten")

        #expect(sqlite3_exec(other, "COMMIT", nil, nil, nil) == SQLITE_OK)
        sqlite3_close(other)
        _ = await handling.value
        #expect(try await store.button(id: "door")?.total == 2)
        #expect(try await store.recentDeliveries(limit: 10).map(\.packetID) == [1])
        #expect(lines.contains("succeeded after failing"))
        try await store.close()
    }
}
