import Foundation
import Testing
import TrellisCore
import TrellisTestSupport

@testable import TrellisMQTT
@testable import TrellisRelay

@Suite("Share groups: subscriptions, presence and retained states")
struct ShareGroupTests {
    static var shared: RelaySettings {
        var settings = RelaySettings()
        settings.shareGroup = "g"
        settings.clientID = "r1"
        return settings
    }

    @Test("alone, filters are subscribed as they are, with No Local; in a group as $share/<group>/<filter>, without")
    func subscriptions() {
        let subscription = MQTTSubscription("rpi/torpi/+", qos: .atLeastOnce, noLocal: true)
        #expect(RelaySettings().brokerSubscription(subscription) == subscription)
        #expect(
            Self.shared.brokerSubscription(subscription)
                == MQTTSubscription("$share/g/rpi/torpi/+", qos: .atLeastOnce, noLocal: false))
    }

    @Test("the status topic is per relay in a group, and lists the peers heard for Home Assistant")
    func presence() {
        #expect(RelaySettings().statusTopic == "trellis/status")
        #expect(RelaySettings().peerStatusFilter == nil)
        var settings = Self.shared
        #expect(settings.statusTopic == "trellis/status/r1")
        #expect(settings.statsTopic == "trellis/stats/r1")
        #expect(RelaySettings().statsTopic == "trellis/stats")
        #expect(settings.peerStatusFilter == "trellis/status/+")
        #expect(settings.peer(ofStatusTopic: "trellis/status/r2") == "r2")
        #expect(settings.peer(ofStatusTopic: "trellis/status") == nil)
        #expect(settings.peer(ofStatusTopic: "trellis/stats") == nil)
        #expect(RelaySettings().peer(ofStatusTopic: "trellis/status/r2") == nil)
        settings.peerClientIDs = ["r3", "r2", "r1"]
        #expect(settings.groupStatusTopics == ["trellis/status/r1", "trellis/status/r2", "trellis/status/r3"])
        #expect(settings.homeAssistant?.statusTopics == settings.groupStatusTopics)
        #expect(RelaySettings().homeAssistant?.statusTopics == ["trellis/status"])
    }

    @Test("the relay's own topics: the watch's request always, the peers' status in a group; neither shared")
    func ownTopics() {
        let alone = RelaySettings()
        #expect(alone.ownSubscriptions == [MQTTSubscription("trellis/watch/request", qos: .atMostOnce, noLocal: true)])
        #expect(alone.ownTopic("trellis/watch/request") == .watchRequest)
        #expect(alone.ownTopic("trellis/status/r2") == nil, "without a group a status topic is nobody's")
        #expect(alone.ownTopic("trellis/watch/events") == nil)
        #expect(
            Self.shared.ownSubscriptions.map(\.filter) == ["trellis/watch/request", "trellis/status/+"],
            "not $share/g/…: each relay hears them")
        #expect(Self.shared.ownTopic("trellis/status/r2") == .peerStatus(clientID: "r2"))
        #expect(Self.shared.ownTopic("trellis/status/r2/x") == nil)
        #expect(Self.shared.ownTopic("rpi/torpi/app") == nil)
    }

    @Test(
        "the relays online in the group follow trellis/status/+: online counts, offline and a cleared topic do not; each relay allows its part of a client's rate"
    )
    func relaysOnline() async throws {
        // The relay's message loop, fed as its client would feed it: no broker is needed to hear a peer.
        try await withUnconnectedService(.inMemory, settings: Self.shared) { service in
            let loop = Task { await service.handleMessages() }
            defer { loop.cancel() }
            #expect(service.shareGroupRelaysOnline == 1)
            func status(_ id: String, _ text: String) {
                service.client.messages.yield(
                    MQTTMessage(
                        topic: "trellis/status/\(id)", payload: Array(text.utf8), qos: .atLeastOnce, retain: true))
            }
            status("r2", "online")
            status("r3", "online")
            try await eventually("r2 and r3 are counted") { service.shareGroupRelaysOnline == 3 }
            // Three relays share a burst of 9: this one allows 3 of a client's requests, the group about 9.
            let limit = RateLimit(rate: 0.001, burst: 9)
            func admitted(_ client: String) -> Int {
                (0..<9).filter { _ in
                    service.engine.limits.admitRequest(client: client, at: Date(), limit: limit) == .allowed
                }.count
            }
            #expect(admitted("c1") == 3)
            status("r2", "offline")
            try await eventually("r2 is not counted") { service.shareGroupRelaysOnline == 2 }
            status("r3", "")
            try await eventually("r3 is not counted") { service.shareGroupRelaysOnline == 1 }
            #expect(admitted("c2") == 9, "alone again, the relay allows the whole burst")
            loop.cancel()
            await loop.value
        }
    }

    @Test(
        "retained state topics the reconciler keeps equal to the store",
        arguments: [
            ("p2o/buttons/door/state", "button door"),
            ("devices/d1/info", "device d1"),
            ("trellis/models/7/info", "model 7"),
            ("p2o/buttons/door/press", "none"),
            ("trellis/alerts/Fern", "none"),
            ("devices/d1/info/extra", "none")
        ])
    func retainedKinds(_ topic: String, _ expected: String) {
        let described: String =
            switch RetainedState.kind(of: topic, settings: RelaySettings()) {
            case let .button(id)?: "button \(id)"
            case let .device(id)?: "device \(id)"
            case let .model(id)?: "model \(id)"
            case nil: "none"
            }
        #expect(described == expected)
    }
}
