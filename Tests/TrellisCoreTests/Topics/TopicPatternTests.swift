import Testing
import TrellisCore

@Suite("Topic patterns: one spelling of each topic, within the table")
struct TopicPatternTests {
    let prefixes = TopicPrefixes(plant: "garden", buttons: "b", trellis: "relay")

    @Test("a pattern spells, subscribes to and reads back its topics")
    func spelling() {
        #expect(TopicPattern.deviceInfo.topic("node-1", prefixes) == "devices/node-1/info")
        #expect(TopicPattern.modelInfo.filter(prefixes) == "relay/models/+/info")
        #expect(TopicPattern.buttonState.topic("door", prefixes) == "b/buttons/door/state")
        #expect(TopicPattern.plantState.name(in: "relay/plants/42/state", prefixes) == "42")
        #expect(TopicPattern.deviceInfo.name(in: "devices/node-1/info", prefixes) == "node-1")
    }

    @Test(
        "topics of another form, an empty level or a deeper one are not the pattern's",
        arguments: [
            "devices//info", "devices/a/b/info", "devices/a/info/x", "device/a/info", "trellis/plants/1/state", ""
        ])
    func foreign(_ topic: String) {
        #expect(TopicPattern.deviceInfo.name(in: topic, prefixes) == nil)
        #expect(TopicPattern.plantState.name(in: topic, prefixes) == nil)
    }

    @Test("a resolved pattern is the template split at its one name level, and reads as the pattern does")
    func resolved() {
        let device = TopicPattern.deviceInfo.resolved(prefixes)
        #expect(device.head == "devices/" && device.tail == "/info")
        let plant = TopicPattern.plantState.resolved(prefixes)
        #expect(plant.head == "relay/plants/" && plant.tail == "/state")
        #expect(plant.filter == "relay/plants/+/state" && plant.topic("7") == "relay/plants/7/state")
        #expect(plant.name(in: "relay/plants/42/state") == "42")
        for topic in ["relay/plants//state", "relay/plants/1/2/state", "relay/plants/1/state/x", "relay/plants/state"] {
            #expect(plant.name(in: topic) == nil, "\(topic)")
        }
        for pattern in TopicPattern.all {
            #expect(pattern.template.ranges(of: "{name}").count == 1, "\(pattern)")
        }
        let bare = TopicPattern("{trellis}/status").resolved(prefixes)
        #expect(bare.tail == nil && bare.topic("x") == "relay/status" && bare.name(in: "relay/status") == nil)
    }

    /// Every pattern lies within a row of the table, so the ACLs cover what the relay publishes and
    /// subscribes to through it: the row of its template itself, or a wider one (`{trellis}/#`).
    @Test("every pattern lies within a row of the access table", arguments: TopicPattern.all)
    func covered(_ pattern: TopicPattern) {
        let topic = pattern.topic("x", prefixes)
        let rows = TopicAccessTable.rows.filter {
            $0.topic != "#" && TopicFilter($0.filter(prefixes)).match(topic) != nil
        }
        #expect(!rows.isEmpty, "\(pattern) is in no row of the table")
    }

    @Test("outputs and inputs: what only Trellis publishes, and what others publish beside it")
    func outputsAndInputs() {
        let outputs = TopicAccessTable.trellisOutputs(prefixes: prefixes).map(TopicFilter.init)
        let inputs = TopicAccessTable.inputs(prefixes: prefixes).map(TopicFilter.init)
        func isOutput(_ topic: String) -> Bool {
            outputs.contains { $0.match(topic) != nil } && !inputs.contains { $0.match(topic) != nil }
        }
        for output in [
            "garden/fromrpi", "relay/deadletter", "devices/n1/info", "b/clients/app/register-response",
            "relay/clients/app/response/devices/list"
        ] {
            #expect(isOutput(output), "\(output)")
        }
        for input in [
            "garden/torpi", "relay/request/devices/list", "relay/clients/app/request/devices/list",
            "b/clients/app/register", "devices/n1/status", "homeassistant/status"
        ] {
            #expect(!isOutput(input), "\(input)")
        }
    }
}
