import Foundation
import Testing
import TrellisMQTTTypes
@testable import TrellisRelay
import TrellisTestSupport

/// Discovery on the relay service, on each store: what it publishes at a connect, and what a
/// configuration reload that turns it off or moves it does to the retained configs. The service
/// publishes through an ``OutletRecorder``, which keeps the retained message of each topic as the
/// broker would.
@Suite("Home Assistant discovery on the relay service")
struct DiscoveryReloadTests {
    /// Connects, presses `count` buttons once each and checks that Trellis's 3 configs and the 2 of
    /// every button are retained under `homeassistant/`; returns how many configs that is.
    static func pressed(_ count: Int, on service: RelayService, _ outlet: OutletRecorder) async -> Int {
        await service.connectedAnnouncing()
        for index in 0..<count { await service.receive("p2o/buttons/b\(index)/press") }
        await service.announced()
        let all = 3 + 2 * count
        #expect(outlet.configs(under: "homeassistant") == all, "every button's configs")
        return all
    }

    @Test(
        "configs at a connect and with a thing's first press; a new prefix moves them; off clears them",
        arguments: StoreKind.bothStores)
    func reload(_ kind: StoreKind) async throws {
        try await withRecordedService(kind) { service, outlet in
            await service.connectedAnnouncing()
            #expect(outlet.configs(under: "homeassistant") == 3, "Trellis's own configs, retained")
            await service.receive("p2o/buttons/hall/press")
            await service.announced()
            #expect(outlet.configs(under: "homeassistant") == 5, "the button's configs")

            var settings = service.engine.settings
            settings.discoveryPrefix = "ha2"
            try await service.apply(settings)
            await service.announced()
            #expect(outlet.configs(under: "homeassistant") == 0, "every config moved from homeassistant/")
            #expect(outlet.configs(under: "ha2") == 5, "every config moved to ha2/")

            settings.homeAssistantEnabled = false
            try await service.apply(settings)
            await service.announced()
            #expect(outlet.configs(under: "ha2") == 0, "every config cleared")
            #expect(service.engine.discovery.count == 0)
        }
    }

    /// The whole announcement is published from its own task, a few hundred messages at a time;
    /// one that a new prefix interrupts stops before the removals of what it published, so nothing
    /// is left under a prefix no longer in use.
    @Test(
        "an announcement of 600 buttons (1,203 configs) arrives whole; moved twice in a row, nothing stays under the prefixes left",
        arguments: StoreKind.bothStores)
    func largeAnnouncement(_ kind: StoreKind) async throws {
        try await withRecordedService(kind) { service, outlet in
            let all = await Self.pressed(600, on: service, outlet)

            var settings = service.engine.settings
            settings.discoveryPrefix = "ha2"
            try await service.apply(settings)
            settings.discoveryPrefix = "ha3"
            try await service.apply(settings)
            await service.announced()
            #expect(outlet.configs(under: "homeassistant") == 0)
            #expect(outlet.configs(under: "ha2") == 0)
            #expect(outlet.configs(under: "ha3") == all)
        }
    }

    /// Home Assistant's birth message brings the whole announcement again. Its handler only asks for
    /// it; the relay publishes it from the paced announcer, so the message loop goes on answering.
    @Test(
        "a birth message on homeassistant/status brings all 603 configs of 300 buttons again, and the relay answers a request meanwhile",
        arguments: StoreKind.bothStores)
    func birthMessage(_ kind: StoreKind) async throws {
        try await withRecordedService(kind) { service, outlet in
            let all = await Self.pressed(300, on: service, outlet)

            let before = outlet.messages.count
            await service.receive("homeassistant/status", "online")
            await service.receive("p2o/buttons/late/press")
            await service.announced()
            let since = outlet.messages.dropFirst(before)
            let configs = since.filter { $0.topic.hasPrefix("homeassistant/") && $0.topic.hasSuffix("/config") }
            #expect(Set(configs.filter { !$0.payload.isEmpty }.map(\.topic)).count >= all, "every config again")
            #expect(since.contains { $0.topic == "p2o/buttons/late/state" }, "the late press answered")
            #expect(configs.allSatisfy { !$0.payload.isEmpty }, "a birth message removes nothing")
        }
    }
}
