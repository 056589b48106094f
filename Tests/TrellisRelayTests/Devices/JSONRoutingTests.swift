import Testing
import TrellisRelay

/// The JSON services in the routing table: one route per action and form, a fallback per service
/// that only takes what no action matches, and one subscription per service and form.
@Suite("JSON services: routing table")
struct JSONRoutingTests {
    static let table = Relay.routingTable(settings: RelaySettings())

    @Test(
        "each action has its own route; the fallback only gets unknown actions",
        arguments: [
            ("trellis/request/devices/list", false), ("trellis/clients/bob/request/models/upload", false),
            ("trellis/request/devices/reboot", true), ("trellis/clients/bob/request/logs/tail", true)
        ])
    func routes(_ topic: String, _ fallback: Bool) {
        let matches = Self.table.routes(for: topic)
        #expect(matches.count == 1)
        #expect(matches.first?.route.fallback == fallback)
    }

    @Test("filters covered by a service's fallback are not subscribed, so the broker delivers each request once")
    func subscriptions() {
        let filters = Self.table.subscriptions.map(\.filter)
        #expect(Set(filters).count == filters.count)
        for service in ["devices", "models", "logs"] {
            #expect(filters.contains("trellis/request/\(service)/+"))
            #expect(filters.contains("trellis/clients/+/request/\(service)/+"))
        }
        #expect(!filters.contains { $0.hasPrefix("trellis/request/devices/") && !$0.hasSuffix("/+") })
        #expect(
            filters.contains("devices/+/status") && filters.contains("devices/+/telemetry")
                && filters.contains("devices/+/log"))
        #expect(filters.contains("rpi/torpi") && filters.contains("rpi/torpi/+"))
    }
}
