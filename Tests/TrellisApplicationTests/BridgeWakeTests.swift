import Foundation
import Testing
import TrellisBroker
import TrellisCore
import TrellisStore
import TrellisTestSupport

@testable import TrellisApplication

/// The forwarder is told of each commit that kept messages for its bridge, and sends them then:
/// with its look at the store made rare, a kept message still goes upstream at once. The upstream
/// broker is a real Mosquitto; the store is each kind, whose write-behind tells of its commits.
@Suite("Bridge: the forwarder woken by each commit")
struct BridgeWakeTests {
    @Test(
        "with a look at the store only every minute, each message kept goes upstream within seconds of its commit",
        .timeLimit(.minutes(2)), arguments: StoreKind.bothStores)
    func wokenByCommit(_ kind: StoreKind) async throws {
        try await withTestBroker { upstream in
            try await withStore(kind) { store in
                let reader = try await TestClients.connect(to: upstream, id: "upstream-reader")
                try await withTearDown(of: reader, { await $0.shutdown() }) { reader in
                    let inbox = try await MessageCollector.collecting(reader, subscribedTo: ["sensors/#"])
                    func keep(_ number: Int) async throws {
                        try await store.enqueueForward(
                            bridge: "cloud", rule: "sensors/#", topic: "sensors/\(number)",
                            payload: Array("\(number)".utf8), qos: 1, retain: false, at: Date())
                        try await store.flush()
                    }
                    // Kept before the forwarder starts: it goes with the forwarder's first read.
                    try await keep(0)
                    let forwarder = try BridgeForwarder(
                        bridge: BridgeSettings(
                            name: "cloud", host: upstream.host, port: upstream.port,
                            rules: [BridgeRule(direction: .out, filter: "sensors/#")]),
                        store: store, owner: "r", group: nil, maximumPacketSize: nil, logger: CapturedLog().logger,
                        idlePoll: .seconds(60))
                    try await withTearDown(of: Task { try await forwarder.run() }, cancelAndWait) { _ in
                        _ = try await inbox.messages(on: "sensors/0", timeout: .seconds(30))
                        // Kept while the forwarder waits for a minute: only the commit's word can send it
                        // within the 30 s each is given.
                        for number in 1...3 {
                            try await keep(number)
                            let arrived = try await inbox.messages(on: "sensors/\(number)", timeout: .seconds(30))
                            #expect(arrived.first?.payload == Array("\(number)".utf8))
                        }
                    }
                }
            }
        }
    }
}
