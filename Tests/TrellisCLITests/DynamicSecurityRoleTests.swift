import Foundation
import Testing
import TrellisMQTT
import TrellisTestSupport

/// Each role of the profile, made by `trellis users add` in the real plugin, may publish, subscribe
/// to and receive exactly its topics among the probes below.
@Suite("Roles in the dynamic security plugin")
struct DynamicSecurityRoleTests {
    /// Publishes tried by every account, `N` standing for its name.
    static let publishProbes = [
        "rpi/torpi/N", "p2o/clients/N/status", "p2o/clients/N/register", "p2o/clients/N/unregister",
        "trellis/clients/N/request/devices/list", "rpi/torpi/other", "trellis/clients/other/request/devices/list",
        "p2o/clients/other/status", "p2o/buttons/N/press", "p2o/buttons/other/press", "devices/N/status",
        "devices/N/telemetry", "devices/N/log", "devices/N/info", "devices/N/command", "devices/other/status",
        "rpi/sensors/0x36", "rpi/sensors/0x37", "rpi/sensors/0x40", "trellis/request/devices/list", "trellis/status",
        "rpi/fromrpi/N", "p2o/buttons/N/state"
    ]
    /// Subscriptions tried by every account.
    static let subscribeProbes = [
        "rpi/fromrpi/N", "rpi/fromrpi/N/rr", "p2o/clients/N/button-press", "trellis/clients/N/response/#",
        "trellis/status", "p2o/buttons/+/state", "rpi/fromrpi/other", "rpi/torpi/#", "p2o/clients/other/+",
        "trellis/clients/other/response/#", "devices/N/info", "devices/N/command", "devices/other/info",
        "trellis/response/#", "trellis/#", "rpi/sensors/#", "#"
    ]
    /// What every account but Trellis's may do.
    static let ownPublishes = [
        "rpi/torpi/N", "p2o/clients/N/status", "p2o/clients/N/register", "p2o/clients/N/unregister",
        "trellis/clients/N/request/devices/list"
    ]
    static let ownSubscriptions = [
        "rpi/fromrpi/N", "rpi/fromrpi/N/rr", "p2o/clients/N/button-press",
        "trellis/clients/N/response/#", "trellis/status", "p2o/buttons/+/state"
    ]

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var flags: [String]
        var publishes: [String]
        var subscriptions: [String]
        var testDescription: String { "\(name) \(flags.joined(separator: " "))" }
    }

    /// Each role its row of the topic table (docs/security.md), written out here by hand so the
    /// plugin is checked against the table's meaning, not against its own derivation: an app its own
    /// topics, a button its presses, a device its own topics, a sensor node its readings, an
    /// operator every request and event and every topic to read.
    static let rows: [Row] = [
        Row(name: "alice", flags: [], publishes: ownPublishes, subscriptions: ownSubscriptions),
        Row(
            name: "door", flags: ["--button"], publishes: ["p2o/buttons/N/press"],
            subscriptions: ["trellis/status", "p2o/buttons/+/state"]),
        Row(
            name: "node1", flags: ["--device"], publishes: ["devices/N/status", "devices/N/telemetry", "devices/N/log"],
            subscriptions: ["trellis/status", "devices/N/info", "devices/N/command"]),
        Row(
            name: "pi1", flags: ["--sensor", "0x36", "0x37"], publishes: ["rpi/sensors/0x36", "rpi/sensors/0x37"],
            subscriptions: ["trellis/status"]),
        Row(
            name: "ops", flags: ["--operator"],
            publishes: ownPublishes + [
                "p2o/buttons/N/press", "p2o/buttons/other/press", "devices/N/status", "devices/N/telemetry",
                "devices/N/log", "devices/other/status", "rpi/sensors/0x36", "rpi/sensors/0x37",
                "rpi/sensors/0x40", "trellis/request/devices/list"
            ],
            subscriptions: subscribeProbes),
        Row(name: "relay", flags: ["--trellis"], publishes: publishProbes, subscriptions: subscribeProbes)
    ]

    @Test("each role may do exactly its topics", arguments: rows)
    func role(_ row: Row) async throws {
        try await DynamicSecurityFixture.with { fixture in
            try await fixture.add(row.name, password: "pw", row.flags)
            try await fixture.add("writer", password: "pw-writer", ["--trellis"])
            let client = try await fixture.login(row.name, password: "pw")
            let writer = try await fixture.login("writer", password: "pw-writer")
            let inbox = await MessageCollector.collecting(client)
            let own = { (topic: String) in topic.replacingOccurrences(of: "N", with: row.name) }

            var published: [String] = [], subscribed: [String] = []
            for probe in Self.publishProbes {
                if (try? await client.publishAndWait(topic: own(probe), payload: [])) != nil { published.append(probe) }
            }
            for probe in Self.subscribeProbes {
                if (try? await client.subscribe(own(probe))) != nil { subscribed.append(probe) }
            }
            #expect(published == Self.publishProbes.filter(row.publishes.contains))
            #expect(subscribed == Self.subscribeProbes.filter(row.subscriptions.contains))

            // What it may subscribe to also reaches it: a message on a topic each filter matches.
            let topics = subscribed.map {
                own($0).replacingOccurrences(of: "+", with: "x").replacingOccurrences(of: "#", with: "x")
            }
            for topic in topics { try await writer.publishAndWait(topic: topic, payload: Array("to \(row.name)".utf8)) }
            for topic in topics { try await inbox.messages(on: topic) }
            await client.shutdown()
            await writer.shutdown()
        }
    }
}
