/// The devices and entities of each kind of thing Trellis knows. Every state comes from a retained
/// topic Trellis publishes anyway (`trellis/status`, `trellis/stats`, `trellis/plants/<id>/state`,
/// `trellis/alerts/<plant>`, `<buttons>/<id>/state`, `devices/<id>/info`).
extension HomeAssistantDiscovery {
    /// Node ids: one per Home Assistant device, so entity ids group by thing.
    public func plantNode(id: Int64) -> String { "\(base)_plant_\(id)" }
    public func buttonNode(id: String) -> String { "\(base)_button_\(DiscoveryID.encode(id))" }
    public func deviceNode(id: String) -> String { "\(base)_device_\(DiscoveryID.encode(id))" }

    /// Trellis itself: whether it runs (not tied to its own availability, so it reads `off`, not
    /// unavailable, when Trellis stops), and two diagnostic sensors from `trellis/stats`.
    public func trellis(statsTopic: String) -> [DiscoveryConfig] {
        let node = base
        let device = deviceBlock(identifier: hubIdentifier, name: "Trellis", model: "MQTT relay", viaHub: false)
        let diagnostic: JSONValue = .string("diagnostic")
        return [
            entity(
                "binary_sensor", node: node, object: "connectivity", name: "Connectivity", device: device,
                available: false,
                [
                    "state_topic": .string(statusTopics[0]), "payload_on": .string("online"),
                    "payload_off": .string("offline"),
                    "device_class": .string("connectivity"), "entity_category": diagnostic
                ]),
            entity(
                "sensor", node: node, object: "messages_handled", name: "Messages handled", device: device,
                [
                    "state_topic": .string(statsTopic),
                    "value_template": .string("{{ value_json.counters.received.values() | sum }}"),
                    "state_class": .string("total_increasing"), "entity_category": diagnostic,
                    "icon": .string("mdi:message-processing")
                ]),
            entity(
                "sensor", node: node, object: "dead_letters", name: "Dead letters", device: device,
                [
                    "state_topic": .string(statsTopic),
                    "value_template": .string("{{ value_json.state.dead_letters }}"),
                    "state_class": .string("measurement"), "entity_category": diagnostic,
                    "icon": .string("mdi:email-alert")
                ])
        ]
    }

    /// A plant: its moisture in percent (the sensors' 1–10 scale times ten), its temperature in °F,
    /// the time of its latest reading, and whether it has an active care alert.
    public func plant(id: Int64, name: String, stateTopic: String, alertTopic: String) -> [DiscoveryConfig] {
        let node = plantNode(id: id)
        let device = deviceBlock(identifier: node, name: name, model: "Plant")
        let state = JSONValue.string(stateTopic)
        return [
            entity(
                "sensor", node: node, object: "moisture", name: "Moisture", device: device,
                [
                    "state_topic": state, "value_template": .string("{{ value_json.moisture_percent }}"),
                    "json_attributes_topic": state,
                    "json_attributes_template": .string("{{ {'sensors': value_json.sensors} | tojson }}"),
                    "device_class": .string("moisture"), "unit_of_measurement": .string("%"),
                    "state_class": .string("measurement")
                ]),
            entity(
                "sensor", node: node, object: "temperature", name: "Temperature", device: device,
                [
                    "state_topic": state, "value_template": .string("{{ value_json.temperature_f }}"),
                    "device_class": .string("temperature"), "unit_of_measurement": .string("°F"),
                    "state_class": .string("measurement"), "suggested_display_precision": .integer(1)
                ]),
            entity(
                "sensor", node: node, object: "last_reading", name: "Last reading", device: device,
                [
                    "state_topic": state, "value_template": .string("{{ value_json.last_reading }}"),
                    "device_class": .string("timestamp")
                ]),
            entity(
                "binary_sensor", node: node, object: "needs_care", name: "Needs care", device: device,
                [
                    "state_topic": .string(alertTopic),
                    "value_template": .string("{{ 'OFF' if value_json.ok else 'ON' }}"),
                    "device_class": .string("problem")
                ])
        ]
    }

    /// A button: an event entity firing `press` on every press (from the button's state topic,
    /// whose retained copy Home Assistant ignores, so no press is invented at start-up), and its
    /// total number of presses.
    public func button(id: String, stateTopic: String) -> [DiscoveryConfig] {
        let node = buttonNode(id: id)
        let device = deviceBlock(identifier: node, name: "Button \(id)", model: "Button")
        let state = JSONValue.string(stateTopic)
        return [
            entity(
                "event", node: node, object: "press", name: "Press", device: device,
                [
                    "state_topic": state, "event_types": .array([.string("press")]),
                    "value_template": .string(#"{"event_type":"press","total":{{ value_json.total }}}"#),
                    "device_class": .string("button")
                ]),
            entity(
                "sensor", node: node, object: "total", name: "Presses", device: device,
                [
                    "state_topic": state, "value_template": .string("{{ value_json.total }}"),
                    "state_class": .string("total_increasing"), "icon": .string("mdi:counter")
                ])
        ]
    }

    /// A fleet device: whether it is online, its signal strength, its model, and a restart button
    /// whose press is the fleet's own restart request (`restartTopic`), so Trellis logs it and sends
    /// the device its restart command as for any other client.
    public func device(id: String, name: String?, model: String?, infoTopic: String, restartTopic: String)
        -> [DiscoveryConfig]
    {
        let node = deviceNode(id: id)
        let device = deviceBlock(identifier: node, name: name ?? id, model: model ?? "Fleet device")
        let info = JSONValue.string(infoTopic)
        let diagnostic: JSONValue = .string("diagnostic")
        return [
            entity(
                "binary_sensor", node: node, object: "connectivity", name: "Connectivity", device: device,
                [
                    "state_topic": info, "value_template": .string("{{ value_json.powerstate }}"),
                    "payload_on": .string("online"), "payload_off": .string("offline"),
                    "device_class": .string("connectivity")
                ]),
            entity(
                "sensor", node: node, object: "signal_strength", name: "Signal strength", device: device,
                [
                    "state_topic": info, "value_template": .string("{{ value_json.rssi }}"),
                    "device_class": .string("signal_strength"), "unit_of_measurement": .string("dBm"),
                    "state_class": .string("measurement"), "entity_category": diagnostic
                ]),
            entity(
                "sensor", node: node, object: "model", name: "Model", device: device,
                [
                    "state_topic": info,
                    "value_template": .string(
                        "{{ value_json.model_id if value_json.model_id is not none else 'unassigned' }}"),
                    "entity_category": diagnostic, "icon": .string("mdi:chip")
                ]),
            entity(
                "button", node: node, object: "restart", name: "Restart", device: device,
                [
                    "command_topic": .string(restartTopic),
                    "payload_press": .string(String(decoding: JSONEnvelope.encode(["id": id]), as: UTF8.self)),
                    "device_class": .string("restart"), "entity_category": .string("config")
                ])
        ]
    }
}
