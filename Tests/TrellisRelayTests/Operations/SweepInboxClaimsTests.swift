import Testing
import TrellisCore
@testable import TrellisRelay
import TrellisMQTTTypes

/// While a retained sweep reads, a message whose topic it may claim is left to the message loop
/// (which offers it to the sweep) rather than answered in the client's callback; any other topic,
/// a plant request's among them, is not held back. `claims` says which, changing nothing.
@Suite("What a retained sweep may claim")
struct SweepInboxClaimsTests {
    static let plan = RetainedSweepPlan(
        discoveryPrefix: "homeassistant", earlierPrefixes: ["site/ha"],
        nodeBase: "trellis", trellisPrefix: "trellis")

    @Test(
        "its markers and its subscriptions' topics, and nothing else",
        arguments: [
            ("trellis/sweep/abc", true),
            ("trellis/sweep/leftover", true),
            ("homeassistant/sensor/trellis_plant_3/moisture/config", true),
            ("site/ha/sensor/trellis_plant_3/moisture/config", true),
            ("devices/pump-1/info", true),
            ("trellis/plants/3/state", true),
            ("rpi/torpi", false),
            ("rpi/torpi/Bob", false),
            ("p2o/buttons/hall/press", false)
        ])
    func claims(topic: String, claimed: Bool) {
        let inbox = SweepInbox(plan: Self.plan, marker: "trellis/sweep/abc")
        #expect(inbox.claims(topic) == claimed)
        // Asking changed nothing: the marker still counts when it comes.
        #expect(inbox.offer(MQTTMessage(topic: "trellis/sweep/abc", payload: [])))
    }
}
