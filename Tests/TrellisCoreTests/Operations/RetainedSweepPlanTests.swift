import Testing
import TrellisCore

/// Which retained topics the sweep reads, which it recognises as Trellis's, and which it clears.
@Suite("Retained sweep plan")
struct RetainedSweepPlanTests {
    typealias Subject = RetainedSweepPlan.Subject

    static let plan = RetainedSweepPlan(
        discoveryPrefix: "homeassistant", earlierPrefixes: ["site/ha"],
        nodeBase: "trellis", trellisPrefix: "trellis")

    @Test(
        "topics and what they are",
        arguments: [
            (
                "homeassistant/sensor/trellis_plant_3/moisture/config",
                Subject.discoveryConfig(current: true, thing: .plant(3), entity: "sensor/moisture")
            ),
            (
                "homeassistant/binary_sensor/trellis/connectivity/config",
                .discoveryConfig(current: true, thing: .trellis, entity: "binary_sensor/connectivity")
            ),
            (
                "homeassistant/event/trellis_button_hall/press/config",
                .discoveryConfig(current: true, thing: .button("hall"), entity: "event/press")
            ),
            (
                "homeassistant/sensor/trellis_device_pump-1/model/config",
                .discoveryConfig(current: true, thing: .device("pump-1"), entity: "sensor/model")
            ),
            (
                "homeassistant/event/trellis_button_front_20door/press/config",
                .discoveryConfig(current: true, thing: .button("front door"), entity: "event/press")
            ),
            (
                "homeassistant/event/trellis_button_front_20Door/press/config",
                .discoveryConfig(current: true, thing: .button("front Door"), entity: "event/press")
            ),
            (
                "homeassistant/event/trellis_button__41/press/config",
                .discoveryConfig(current: true, thing: nil, entity: "event/press")
            ),
            (
                "homeassistant/event/trellis_button_x_4/press/config",
                .discoveryConfig(current: true, thing: nil, entity: "event/press")
            ),
            (
                "homeassistant/sensor/trellis_plant_03/moisture/config",
                .discoveryConfig(current: true, thing: nil, entity: "sensor/moisture")
            ),
            (
                "homeassistant/sensor/trellis_plant_fern/moisture/config",
                .discoveryConfig(current: true, thing: nil, entity: "sensor/moisture")
            ),
            (
                "ha-old/sensor/trellis_plant_3/moisture/config",
                .discoveryConfig(current: false, thing: .plant(3), entity: "sensor/moisture")
            ),
            (
                "site/ha/event/trellis_button_hall/press/config",
                .discoveryConfig(current: false, thing: .button("hall"), entity: "event/press")
            ),
            ("devices/pump-1/info", .device("pump-1")),
            ("trellis/models/m1/info", .model("m1")),
            ("trellis/plants/12/state", .plant(12))
        ] as [(String, Subject)])
    func recognised(topic: String, subject: Subject) {
        #expect(Self.plan.subject(of: topic) == subject)
    }

    @Test(
        "topics that are not Trellis's are left alone",
        arguments: [
            "homeassistant/sensor/zigbee2mqtt_0x00158d/temperature/config",
            "homeassistant/sensor/trellis2/connectivity/config",
            "homeassistant/sensor/trellis_2fa/connectivity/config",
            "homeassistant/sensor/trellis_plant_/moisture/config",
            "other/site/ha/event/trellis_button_hall/press/config",
            "devices/a/b/info",
            "devices//info",
            "devices/pump-1/state",
            "trellis/plants/fern/state",
            "trellis/plants/1/alert",
            "trellis/models/m1/build",
            "homeassistant/status"
        ])
    func ignored(topic: String) {
        #expect(Self.plan.subject(of: topic) == nil)
    }

    @Test("filters: any one-level prefix, the multi-level prefixes named, and the state topics, each once")
    func filters() {
        #expect(
            Self.plan.filters == [
                "+/+/+/+/config", "site/ha/+/+/+/config", "devices/+/info",
                "trellis/models/+/info", "trellis/plants/+/state"
            ])
        let off = RetainedSweepPlan(
            discoveryPrefix: nil, earlierPrefixes: ["homeassistant"], nodeBase: "trellis", trellisPrefix: "trellis")
        #expect(off.filters == ["+/+/+/+/config", "devices/+/info", "trellis/models/+/info", "trellis/plants/+/state"])
        #expect(
            off.subject(of: "homeassistant/sensor/trellis_plant_3/moisture/config")
                == .discoveryConfig(current: false, thing: .plant(3), entity: "sensor/moisture"))
    }

    @Test("stale: a node the state no longer has, an entity its kind does not have, a config under another prefix")
    func stale() {
        let facts = RetainedSweepFacts(
            buttonIDs: ["hall", "front door"],
            entities: [
                .plant: ["sensor/moisture"], .trellis: ["binary_sensor/connectivity"],
                .button: ["event/press"], .device: ["sensor/model"]
            ],
            deviceIDs: ["pump-1"], modelIDs: ["m1"], plantIDs: [3])
        let cases: [(String, Bool)] = [
            ("homeassistant/sensor/trellis_plant_3/moisture/config", false),
            ("homeassistant/sensor/trellis_plant_3/humidity/config", true),
            ("homeassistant/sensor/trellis_plant_4/moisture/config", true),
            ("homeassistant/binary_sensor/trellis/connectivity/config", false),
            ("homeassistant/event/trellis_button_gone/press/config", true),
            ("homeassistant/event/trellis_button_hall/press/config", false),
            ("homeassistant/event/trellis_button_front_20door/press/config", false),
            ("homeassistant/event/trellis_button_hall/total/config", true),
            ("homeassistant/event/trellis_button__68all/press/config", true),
            ("homeassistant/sensor/trellis_device_pump-1/model/config", false),
            ("homeassistant/sensor/trellis_device_pump-2/model/config", true),
            ("homeassistant/sensor/trellis_plant_03/moisture/config", true),
            ("ha-old/sensor/trellis_plant_3/moisture/config", true),
            ("devices/pump-1/info", false),
            ("devices/pump-2/info", true),
            ("trellis/models/m1/info", false),
            ("trellis/models/m2/info", true),
            ("trellis/plants/3/state", false),
            ("trellis/plants/4/state", true)
        ]
        for (topic, stale) in cases {
            let subject = Self.plan.subject(of: topic)
            #expect(subject.map(facts.isStale) == stale, "\(topic)")
        }
    }
}
