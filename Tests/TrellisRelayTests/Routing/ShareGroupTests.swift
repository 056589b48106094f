import Testing
import TrellisMQTT
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
        #expect(Self.shared.brokerSubscription(subscription)
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

    @Test("retained state topics the reconciler keeps equal to the store", arguments: [
        ("p2o/buttons/door/state", "button door"),
        ("devices/d1/info", "device d1"),
        ("trellis/models/7/info", "model 7"),
        ("p2o/buttons/door/press", "none"),
        ("trellis/alerts/Fern", "none"),
        ("devices/d1/info/extra", "none"),
    ])
    func retainedKinds(_ topic: String, _ expected: String) {
        let described: String = switch RetainedState.kind(of: topic, settings: RelaySettings()) {
        case let .button(id)?: "button \(id)"
        case let .device(id)?: "device \(id)"
        case let .model(id)?: "model \(id)"
        case nil: "none"
        }
        #expect(described == expected)
    }
}
