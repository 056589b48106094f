import Foundation
import Testing
import TrellisBroker
import TrellisCore
import TrellisStore
import TrellisTestSupport

@testable import TrellisApplication

/// A bridge's queue held to its bounds while the upstream broker is away: the oldest messages go,
/// counted exactly (not those the forwarder holds, which go upstream when it returns), and the log
/// says so once, then at most once a minute. The queue is the store's, so it runs on each; the
/// upstream broker is a loopback port no one listens on.
@Suite("Bridge: the queue's bounds")
struct BridgeQueueBoundsTests {
    @Test(
        "past max_bytes the oldest are dropped and logged once; the newest wait for the upstream broker",
        arguments: StoreKind.bothStores)
    func bytesBound(_ kind: StoreKind) async throws {
        // Away: the forwarder's client finds no one on its port.
        let port = try #require(PortProbe.freeLoopbackPort())
        try await withStore(kind) { store in
            let bridge = BridgeSettings(
                name: "cloud", host: "127.0.0.1", port: port,
                rules: [BridgeRule(direction: .out, filter: "sensors/#")], window: 2, maxBytes: 1_024)
            for index in 0..<30 {
                try await store.enqueueForward(
                    bridge: "cloud", rule: "sensors/#", topic: "sensors/\(index)",
                    payload: Array(repeating: 7, count: 100), qos: 1,
                    retain: false, at: Date())
            }
            try await store.flush()
            let log = CapturedLog()
            let forwarder = try BridgeForwarder(
                bridge: bridge, store: store, owner: "r", group: nil, maximumPacketSize: nil, logger: log.logger)
            // The forwarder stopped and waited for before the store closes, whatever happened.
            try await withTearDown(of: Task { try await forwarder.run() }, cancelAndWait) { _ in
                try await Self.check(store: store, log: log)
            }
        }
    }

    /// What the running forwarder does with the 30 messages kept, and ten more within the minute.
    /// Its window of 2 holds the oldest four (two in flight on the client, waiting for the link, and
    /// two read after them): they stay, outside the bound, and are not counted as dropped.
    static func check(store: any TrellisStore, log: CapturedLog) async throws {
        let line = "dropped the oldest messages of the bridge's queue"
        let held = (0..<4).map { "sensors/\($0)" }
        try await eventually("the queue held to 1,024 bytes and the four held") {
            try await store.forwardBacklog(bridge: "cloud") == (14, 1_400)
        }
        try await eventually("the drop logged") { log.contains(line) }
        #expect(log.count(.warning, containing: "dropped_by_bytes=16") == 1)
        #expect(log.count(.warning, containing: "dropped_by_rule=sensors/#: 0 by age, 16 by bytes") == 1)
        #expect(
            try await store.forwardBacklogByRule(bridge: "cloud") == [
                "sensors/#": QueuedForwards(messages: 14, bytes: 1_400)
            ])
        #expect(
            try await store.forwards(bridge: "cloud", after: 0, limit: 50).map(\.topic)
                == held + (20..<30).map { "sensors/\($0)" })

        // More drops within the minute wait for the next line.
        for index in 30..<40 {
            try await store.enqueueForward(
                bridge: "cloud", rule: "sensors/#", topic: "sensors/\(index)", payload: Array(repeating: 7, count: 100),
                qos: 1,
                retain: false, at: Date())
        }
        try await eventually("the newest ten kept") {
            try await store.forwards(bridge: "cloud", after: 0, limit: 50).map(\.topic)
                == held + (30..<40).map { "sensors/\($0)" }
        }
        #expect(log.count(.warning, containing: line) == 1)
    }
}
