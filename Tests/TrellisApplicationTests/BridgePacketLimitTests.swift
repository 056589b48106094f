import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisStore
import TrellisTestSupport

@testable import TrellisApplication

/// The largest packet Trellis takes (`broker.max_packet_bytes`) is announced on both of a bridge's
/// upstream connections, and a real Mosquitto (the shared one, which takes packets up to MQTT's
/// 256 MiB) keeps a larger message from each: libmosquitto does not check what it reads. The `out`
/// connection subscribes to nothing, but its session is persistent, so a session kept under its
/// client id with a subscription (an earlier configuration's, or anyone's who took the id) becomes
/// the bridge's when it connects, and what that subscription matches is sent to it: the forwarder
/// drops it, with a warning.
@Suite("Bridge: both upstream connections announce the packet limit")
struct BridgePacketLimitTests {
    static let limit = 16 * 1024
    static let huge = [UInt8](repeating: 0x61, count: 64 * 1024)

    @Test(
        "a huge message on a subscription left in the out connection's session is kept from it, a small one dropped")
    func outConnection() async throws {
        try await SharedBroker.with { broker, space in
            try await withStore(.inMemory) { store in
                let owner = space.id("r")
                // A session under the forwarder's client id, subscribed, left behind for a day.
                let squatter = try await TestClients.connect(to: broker, id: "\(owner)-bridge-cloud") {
                    $0.cleanStart = false
                    $0.sessionExpiry = 86_400
                }
                try await squatter.subscribe(space("big/#"))
                await squatter.shutdown()
                let log = CapturedLog()
                let forwarder = try BridgeForwarder(
                    bridge: BridgeSettings(
                        name: "cloud", host: broker.host, port: broker.port,
                        rules: [BridgeRule(direction: .out, filter: space("sensors/#"))]),
                    store: store, owner: owner, group: nil, maximumPacketSize: Self.limit, logger: log.logger)
                let running = Task { try await forwarder.run() }
                try await withTearDown(of: running, cancelAndWait) { _ in
                    try await eventually("the forwarder is connected upstream") { forwarder.link.isConnected }
                    let publisher = try await TestClients.connect(to: broker)
                    try await withTearDown(of: publisher, { await $0.shutdown() }) { publisher in
                        try await publisher.publishAndWait(
                            topic: space("big/huge"), payload: Self.huge, qos: .atLeastOnce)
                        try await eventually("the broker kept the huge message from the forwarder") {
                            broker.log().contains("Dropping too large outgoing PUBLISH for \(owner)-bridge-cloud")
                        }
                        // A message within the limit reaches the connection, which drops it with a warning.
                        try await publisher.publishAndWait(
                            topic: space("big/small"), payload: [0x63], qos: .atLeastOnce)
                        try await eventually("the forwarder warned of the message it was sent") {
                            log.count(.warning, containing: "a subscription its session was left with") == 1
                        }
                        #expect(log.contains(space("big/small")))
                        #expect(forwarder.link.isConnected)
                    }
                }
            }
        }
    }

    @Test("a huge message on an in rule's filter is kept from the in connection; the next one arrives")
    func inConnection() async throws {
        try await SharedBroker.with { broker, space in
            try await withStore(.inMemory) { store in
                let owner = space.id("r")
                let local = try await TestClients.connect(to: broker)
                let (reader, inbox) = try await TestClients.connectCollecting(to: broker, space("big/#"))
                // Upstream topics up/<root>/big/…, published locally without the prefix: in the test's space.
                let upstream = "up/\(space.root)/big/"
                let receiver = try BridgeReceiver(
                    bridge: BridgeSettings(
                        name: "cloud", host: broker.host, port: broker.port,
                        rules: [BridgeRule(direction: .in, filter: "\(upstream)#", prefix: "up/")]),
                    local: local, store: store, owner: owner, group: nil, maximumPacketSize: Self.limit,
                    logger: CapturedLog().logger)
                let running = Task { try await receiver.run() }
                let publisher = try await TestClients.connect(to: broker)
                try await withTearDown(of: [publisher, reader, local], { for client in $0 { await client.shutdown() } })
                {
                    _ in
                    try await withTearDown(of: running, cancelAndWait) { _ in
                        try await eventually("the receiver is connected upstream") { receiver.link.isConnected }
                        // Its subscription follows the connection: a probe goes through once it is in place.
                        var probes = 0
                        try await eventually("a probe crossed the bridge") {
                            probes += 1
                            try await publisher.publishAndWait(
                                topic: "\(upstream)probe", payload: Array("\(probes)".utf8), qos: .atLeastOnce)
                            return await !inbox.received(on: space("big/probe")).isEmpty
                        }
                        let fits = [UInt8](repeating: 0x62, count: 8 * 1024)
                        try await publisher.publishAndWait(
                            topic: "\(upstream)huge", payload: Self.huge, qos: .atLeastOnce)
                        try await publisher.publishAndWait(topic: "\(upstream)fits", payload: fits, qos: .atLeastOnce)
                        #expect(try await inbox.messages(on: space("big/fits")).first?.payload == fits)
                        #expect(await inbox.received(on: space("big/huge")).isEmpty)
                        #expect(
                            broker.log().contains("Dropping too large outgoing PUBLISH for \(owner)-bridge-cloud-in"))
                        #expect(receiver.link.isConnected)
                    }
                }
            }
        }
    }
}
