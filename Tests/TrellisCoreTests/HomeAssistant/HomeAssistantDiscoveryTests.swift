import Foundation
import Testing
import TrellisCore

@Suite("Home Assistant discovery: ids, configs and plant states")
struct HomeAssistantDiscoveryTests {
    let discovery = HomeAssistantDiscovery(version: "1.2.3")

    /// A config's payload as a dictionary.
    func object(_ config: DiscoveryConfig) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(config.payload)) as? [String: Any])
    }

    func config(_ configs: [DiscoveryConfig], _ suffix: String) throws -> [String: Any] {
        try object(try #require(configs.first { $0.topic.hasSuffix(suffix) }, "no config ending in \(suffix)"))
    }

    /// The text members `keys` of the config ending in `suffix`, in order; nil for one that is
    /// missing or not text. What an entity is checked by, in one expectation.
    func texts(_ configs: [DiscoveryConfig], _ suffix: String, _ keys: String...) throws -> [String?] {
        let body = try config(configs, suffix)
        return keys.map { body[$0] as? String }
    }

    @Test(
        "ids keep letters, digits and '-' and write every other byte as _xx, one-to-one",
        arguments: [
            ("hall", "hall"), ("pump-1", "pump-1"), ("a_b", "a_5fb"), ("a.b", "a_2eb"), ("a b", "a_20b"),
            ("küche", "k_c3_bcche"), ("_5f", "_5f5f")
        ])
    func ids(_ id: String, _ encoded: String) {
        #expect(DiscoveryID.encode(id) == encoded)
        #expect(DiscoveryID.isValid(encoded))
    }

    @Test("different ids never meet", arguments: [("a_b", "a.b"), ("a_2eb", "a.b"), ("A", "a")])
    func distinct(_ one: String, _ other: String) {
        #expect(DiscoveryID.encode(one) != DiscoveryID.encode(other))
    }

    @Test("topics: <prefix>/<component>/<node>/<object>/config, ids from the store id, not the name")
    func plantTopics() throws {
        let configs = discovery.plant(
            id: 3, name: "Fern", stateTopic: "trellis/plants/3/state", alertTopic: "trellis/alerts/Fern")
        #expect(
            configs.map(\.topic) == [
                "homeassistant/sensor/trellis_plant_3/moisture/config",
                "homeassistant/sensor/trellis_plant_3/temperature/config",
                "homeassistant/sensor/trellis_plant_3/last_reading/config",
                "homeassistant/binary_sensor/trellis_plant_3/needs_care/config"
            ])
        let renamed = discovery.plant(
            id: 3, name: "Big fern", stateTopic: "trellis/plants/3/state", alertTopic: "trellis/alerts/Big fern")
        #expect(renamed.map(\.topic) == configs.map(\.topic))
        for (old, new) in zip(configs, renamed) {
            #expect(try object(old)["unique_id"] as? String == (try object(new)["unique_id"] as? String))
            let device = try #require(try object(new)["device"] as? [String: Any])
            #expect(device["name"] as? String == "Big fern")
            #expect(device["identifiers"] as? [String] == ["trellis_plant_3"])
        }
        let unique = try configs.map { try object($0)["unique_id"] as? String }
        #expect(Set(unique).count == 4)
    }

    @Test("every config names its origin, its device, and follows Trellis's availability")
    func common() throws {
        let all =
            discovery.trellis(statsTopic: "trellis/stats")
            + discovery.plant(id: 1, name: "Fern", stateTopic: "s", alertTopic: "a")
            + discovery.button(id: "hall", stateTopic: "p2o/buttons/hall/state")
            + discovery.device(id: "pump-1", name: nil, model: nil, infoTopic: "devices/pump-1/info", restartTopic: "r")
        for config in all {
            let body = try object(config)
            #expect((body["origin"] as? [String: Any])?["name"] as? String == "Trellis")
            #expect((body["origin"] as? [String: Any])?["sw_version"] as? String == "1.2.3")
            #expect(body["device"] is [String: Any])
            #expect(body["unique_id"] is String)
            let uniqueID = body["unique_id"] as? String ?? ""
            #expect(DiscoveryID.isValid(uniqueID))
            if config.topic == "homeassistant/binary_sensor/trellis/connectivity/config" {
                #expect(body["availability"] == nil, "Trellis's own connectivity reads off, not unavailable")
            } else {
                let availability = try #require(body["availability"] as? [[String: String]], "\(config.topic)")
                #expect(
                    availability == [
                        ["topic": "trellis/status", "payload_available": "online", "payload_not_available": "offline"]
                    ])
                #expect(body["availability_mode"] == nil)
            }
            if (body["device"] as? [String: Any])?["identifiers"] as? [String] != ["trellis"] {
                #expect((body["device"] as? [String: Any])?["via_device"] as? String == "trellis")
            }
        }
    }

    @Test("several relays: one availability entry each, mode any")
    func severalRelays() throws {
        let shared = HomeAssistantDiscovery(statusTopics: ["trellis/status", "trellis-b/status"])
        let body = try object(shared.button(id: "hall", stateTopic: "s")[0])
        #expect(
            (body["availability"] as? [[String: String]])?.map { $0["topic"] } == ["trellis/status", "trellis-b/status"]
        )
        #expect(body["availability_mode"] as? String == "any")
    }

    @Test("plant entities: moisture in %, temperature in °F, a timestamp, a problem sensor on the alert topic")
    func plantEntities() throws {
        let configs = discovery.plant(
            id: 7, name: "Fern", stateTopic: "trellis/plants/7/state", alertTopic: "trellis/alerts/Fern")
        #expect(
            try texts(configs, "/moisture/config", "device_class", "unit_of_measurement", "state_class", "state_topic")
                == ["moisture", "%", "measurement", "trellis/plants/7/state"])
        #expect(
            try texts(configs, "/temperature/config", "device_class", "unit_of_measurement") == ["temperature", "°F"])
        let last = try config(configs, "/last_reading/config")
        #expect(last["device_class"] as? String == "timestamp")
        #expect(last["unit_of_measurement"] == nil)
        #expect(
            try texts(configs, "/needs_care/config", "device_class", "state_topic") == [
                "problem", "trellis/alerts/Fern"
            ])
    }

    @Test("button entities: an event with event_types [press] and a total")
    func buttonEntities() throws {
        let configs = discovery.button(id: "hall door", stateTopic: "p2o/buttons/hall door/state")
        #expect(
            configs.map(\.topic) == [
                "homeassistant/event/trellis_button_hall_20door/press/config",
                "homeassistant/sensor/trellis_button_hall_20door/total/config"
            ])
        let event = try config(configs, "/press/config")
        #expect(event["event_types"] as? [String] == ["press"])
        #expect(event["state_topic"] as? String == "p2o/buttons/hall door/state")
        #expect(event["entity_category"] == nil)
        let total = try config(configs, "/total/config")
        #expect(total["state_class"] as? String == "total_increasing")
    }

    @Test(
        "device entities: connectivity, signal strength in dBm, model, and a restart button on the fleet's request topic"
    )
    func deviceEntities() throws {
        let configs = discovery.device(
            id: "pump.1", name: "Pump", model: "Sprinkler", infoTopic: "devices/pump.1/info",
            restartTopic: "trellis/request/devices/restart")
        #expect(try texts(configs, "/connectivity/config", "device_class", "payload_on") == ["connectivity", "online"])
        #expect(
            try texts(configs, "/signal_strength/config", "unit_of_measurement", "device_class") == [
                "dBm", "signal_strength"
            ])
        #expect(configs.last?.topic == "homeassistant/button/trellis_device_pump_2e1/restart/config")
        #expect(
            try texts(configs, "/restart/config", "command_topic", "payload_press", "device_class")
                == ["trellis/request/devices/restart", #"{"id":"pump.1"}"#, "restart"])
        let restart = try config(configs, "/restart/config")
        let device = try #require(restart["device"] as? [String: Any])
        #expect(device["name"] as? String == "Pump")
        #expect(device["model"] as? String == "Sprinkler")
        let unnamed = try object(
            discovery.device(id: "n1", name: nil, model: nil, infoTopic: "i", restartTopic: "r")[0])
        #expect((unnamed["device"] as? [String: Any])?["name"] as? String == "n1")
    }

    @Test("removals are zero-byte payloads on the same topics")
    func removals() {
        let configs = discovery.button(id: "hall", stateTopic: "s")
        let removals = HomeAssistantDiscovery.removals(of: configs)
        #expect(removals.map(\.topic) == configs.map(\.topic))
        #expect(removals.allSatisfy { $0.payload.isEmpty })
    }

    @Test("the prefix and Trellis's own prefix shape every topic and id")
    func prefixes() throws {
        let other = HomeAssistantDiscovery(prefix: "ha", trellisPrefix: "relay-2")
        let config = other.plant(id: 1, name: "Fern", stateTopic: "s", alertTopic: "a")[0]
        #expect(config.topic == "ha/sensor/relay-2_plant_1/moisture/config")
        #expect(try object(config)["unique_id"] as? String == "relay-2_plant_1_moisture")
        #expect(other.birthTopic == "ha/status")
    }

    @Test("an unchanged config is the same bytes")
    func stable() {
        #expect(discovery.trellis(statsTopic: "trellis/stats") == discovery.trellis(statsTopic: "trellis/stats"))
    }

    @Test("a plant's state: mean moisture in percent, mean temperature, newest reading; null until a sensor reports")
    func plantState() throws {
        let empty = PlantState(id: 2, name: "Fern", sensors: [PlantSensorRecord(plant: "Fern", sensor: "0x36")])
        #expect(
            String(decoding: empty.payload(), as: UTF8.self)
                == #"{"id":2,"last_reading":null,"moisture_percent":null,"name":"Fern","#
                + #""sensors":[{"at":null,"moisture":null,"sensor":"0x36","temperature_f":null}],"temperature_f":null}"#
        )
        let t1 = Date(timeIntervalSince1970: 1_795_344_000)
        let t2 = t1.addingTimeInterval(60)
        let state = PlantState(
            id: 2, name: "Fern",
            sensors: [
                PlantSensorRecord(plant: "Fern", sensor: "0x36", moisture: 5, temperature: 70, at: t1),
                PlantSensorRecord(plant: "Fern", sensor: "0x37", moisture: 6, temperature: 71.25, at: t2),
                PlantSensorRecord(plant: "Fern", sensor: "0x38")
            ])
        #expect(state.moisturePercent == 55)
        #expect(state.temperatureF == 70.6)
        #expect(state.lastReading == t2)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(state.payload())) as? [String: Any])
        #expect(body["last_reading"] as? String == "2026-11-22T10:41:00.000Z")
        #expect((body["sensors"] as? [Any])?.count == 3)
    }
}
