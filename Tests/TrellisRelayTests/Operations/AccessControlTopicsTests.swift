import Testing
import TrellisBroker
import TrellisRelay

/// The secure profile's ACL is written by `TrellisBroker`, which knows nothing of the relay: its
/// default topic prefixes must be the relay's.
@Suite("The ACL's topic prefixes")
struct AccessControlTopicsTests {
    @Test("the ACL's default prefixes are the relay's defaults")
    func defaults() {
        let settings = RelaySettings()
        #expect(AccessControlList.Topics() == settings.topicPrefixes)
    }

    @Test("the patterns follow the prefixes given")
    func prefixes() {
        var acl = AccessControlList()
        acl.set("alice", role: .client)
        let text = acl.render(topics: .init(plant: "garden", buttons: "bell", trellis: "relay"))
        #expect(text.contains("topic write garden/torpi\n"), "the anonymous app's request topic")
        #expect(text.contains("topic write garden/torpi/alice"))
        #expect(text.contains("topic write bell/clients/alice/status"))
        #expect(text.contains("topic read relay/status"))
        #expect(!text.contains(" rpi/") && !text.contains(" p2o/") && !text.contains(" trellis/"))
    }
}
