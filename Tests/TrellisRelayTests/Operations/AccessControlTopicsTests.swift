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
        #expect(AccessControlList.Topics() == AccessControlList.Topics(
            plant: settings.plantPrefix, buttons: settings.buttonPrefix, trellis: settings.trellisPrefix))
    }

    @Test("the patterns follow the prefixes given")
    func prefixes() {
        let text = AccessControlList().render(topics: .init(plant: "garden", buttons: "bell", trellis: "relay"))
        #expect(text.contains("pattern write garden/torpi/%u"))
        #expect(text.contains("pattern write bell/clients/%u/status"))
        #expect(text.contains("pattern read relay/status"))
        #expect(!text.contains(" rpi/") && !text.contains(" p2o/"))
    }
}
