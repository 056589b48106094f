import Foundation
import Logging
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisStoreSQLite
import TrellisTestSupport

/// Discovery as the engine drives it, without a broker: what each message makes Trellis publish
/// under `homeassistant/…` and on the plant state topics.
@Suite("Home Assistant discovery follows what Trellis publishes")
struct DiscoveryFlowTests {
    static let now = Date(timeIntervalSince1970: 1_795_344_000)

    /// Runs `body` with an engine on a fresh in-memory store, discovery on unless told, then
    /// closes the store.
    static func withEngine(enabled: Bool = true, _ body: (RelayEngine) async throws -> Void) async throws {
        var settings = RelaySettings()
        settings.homeAssistantEnabled = enabled
        try await closing(try SQLiteStore.inMemory()) { store in
            try await body(Relay.engine(store: store, settings: settings, logger: Logger(label: "test")))
        }
    }

    static func plantRequest(_ payload: String, _ operation: String) -> MQTTMessage {
        MQTTMessage(
            topic: "rpi/torpi",
            payload: Array("ID:1;sender:ann;receiver:Host-RPI3B+;payload:\(payload);operation:\(operation)".utf8))
    }

    static func message(_ topic: String, _ payload: String, retain: Bool = false) -> MQTTMessage {
        MQTTMessage(topic: topic, payload: Array(payload.utf8), retain: retain)
    }

    /// The discovery configs among `published`: topic → payload text ("" for a removal).
    static func configs(_ published: [MQTTMessage]) -> [String: String] {
        var out: [String: String] = [:]
        for message in published where message.topic.hasPrefix("homeassistant/") {
            #expect(message.retain, "\(message.topic) must be retained")
            out[message.topic] = String(decoding: message.payload, as: UTF8.self)
        }
        return out
    }

    @Test("a button's configs come with its first press and not again; its state topic feeds them")
    func button() async throws {
        try await Self.withEngine { engine in
            let first = await engine.process(Self.message("p2o/buttons/hall/press", ""), at: Self.now)
            #expect(
                Set(Self.configs(first).keys) == [
                    "homeassistant/event/trellis_button_hall/press/config",
                    "homeassistant/sensor/trellis_button_hall/total/config"
                ])
            #expect(Self.configs(first).values.allSatisfy { $0.contains(#""state_topic":"p2o/buttons/hall/state""#) })
            let second = await engine.process(Self.message("p2o/buttons/hall/press", ""), at: Self.now)
            #expect(Self.configs(second).isEmpty)
            #expect(second.contains { $0.topic == "p2o/buttons/hall/state" })
        }
    }

    @Test("a plant: configs and state when added, state after each reading, everything cleared when deleted")
    func plant() async throws {
        try await Self.withEngine { engine in
            let added = await engine.process(Self.plantRequest("Fern,0x36", "REQ_addNewPlant"), at: Self.now)
            let configs = Self.configs(added)
            #expect(configs.count == 4)
            #expect(
                configs["homeassistant/sensor/trellis_plant_1/moisture/config"]?.contains(#""name":"Fern""#) == true)
            let state = try #require(added.first { $0.topic == "trellis/plants/1/state" })
            #expect(state.retain)
            #expect(String(decoding: state.payload, as: UTF8.self).contains(#""moisture_percent":null"#))

            let reading = await engine.process(
                Self.message("rpi/sensors/0x36", #"{"moisture":7,"temperature":68.5}"#), at: Self.now)
            let updated = try #require(reading.first { $0.topic == "trellis/plants/1/state" })
            let text = String(decoding: updated.payload, as: UTF8.self)
            #expect(text.contains(#""moisture_percent":70"#))
            #expect(text.contains(#""temperature_f":68.5"#))
            #expect(text.contains(#""last_reading":"2026-11-22T10:40:00.000Z""#))
            #expect(Self.configs(reading).isEmpty, "an unchanged config is not sent again")

            let other = await engine.process(
                Self.message("rpi/sensors/0x99", #"{"moisture":7,"temperature":68.5}"#), at: Self.now)
            #expect(!other.contains { $0.topic.hasPrefix("trellis/plants/") }, "a sensor of no plant changes no plant")

            let deleted = await engine.process(Self.plantRequest("Fern", "REQ_deletePlant"), at: Self.now)
            #expect(deleted.contains { $0.topic == "trellis/plants/1/state" && $0.payload.isEmpty && $0.retain })
            #expect(Self.configs(deleted) == Dictionary(uniqueKeysWithValues: configs.keys.map { ($0, "") }))
        }
    }

    @Test("a fleet device: configs when it first reports, again when renamed, cleared when deleted")
    func device() async throws {
        try await Self.withEngine { engine in
            let online = await engine.process(Self.message("devices/pump-1/status", "online"), at: Self.now)
            let configs = Self.configs(online)
            #expect(
                Set(configs.keys) == [
                    "homeassistant/binary_sensor/trellis_device_pump-1/connectivity/config",
                    "homeassistant/sensor/trellis_device_pump-1/signal_strength/config",
                    "homeassistant/sensor/trellis_device_pump-1/model/config",
                    "homeassistant/button/trellis_device_pump-1/restart/config"
                ])
            let telemetry = await engine.process(
                Self.message("devices/pump-1/telemetry", #"{"rssi":-61}"#), at: Self.now)
            #expect(Self.configs(telemetry).isEmpty)

            let renamed = await engine.process(
                Self.message("trellis/request/devices/update", #"{"id":"pump-1","name":"Pump"}"#), at: Self.now)
            #expect(Self.configs(renamed).count == 4)
            #expect(Self.configs(renamed).values.allSatisfy { $0.contains(#""name":"Pump""#) })

            let deleted = await engine.process(
                Self.message("trellis/request/devices/delete", #"{"id":"pump-1"}"#), at: Self.now)
            #expect(Self.configs(deleted) == Dictionary(uniqueKeysWithValues: configs.keys.map { ($0, "") }))
        }
    }

    @Test("Home Assistant's birth message brings every config again, with each plant's state")
    func birth() async throws {
        try await Self.withEngine { engine in
            _ = await engine.process(Self.plantRequest("Fern,0x36", "REQ_addNewPlant"), at: Self.now)
            _ = await engine.process(Self.message("p2o/buttons/hall/press", ""), at: Self.now)
            _ = await engine.process(Self.message("devices/pump-1/status", "online"), at: Self.now)
            let birth = await engine.process(Self.message("homeassistant/status", "online"), at: Self.now)
            #expect(Self.configs(birth).count == 13, "Trellis 3, plant 4, button 2, device 4")
            #expect(birth.contains { $0.topic == "trellis/plants/1/state" })
            let offline = await engine.process(Self.message("homeassistant/status", "offline"), at: Self.now)
            #expect(offline.isEmpty)
        }
    }

    @Test("with discovery off, nothing under homeassistant/ and no plant states; the birth topic is not a route")
    func off() async throws {
        try await Self.withEngine(enabled: false) { engine in
            var published: [MQTTMessage] = []
            published += await engine.process(Self.plantRequest("Fern,0x36", "REQ_addNewPlant"), at: Self.now)
            published += await engine.process(
                Self.message("rpi/sensors/0x36", #"{"moisture":7,"temperature":68.5}"#), at: Self.now)
            published += await engine.process(Self.message("p2o/buttons/hall/press", ""), at: Self.now)
            published += await engine.process(Self.message("devices/pump-1/status", "online"), at: Self.now)
            #expect(
                !published.contains { $0.topic.hasPrefix("homeassistant/") || $0.topic.hasPrefix("trellis/plants/") })
            #expect(!engine.routes.subscriptions.contains { $0.filter.hasPrefix("homeassistant/") })
        }
    }
}

extension DiscoveryFlowTests {
    @Test("a deleted thing's configs are cleared before its state, so Home Assistant never reads the empty state")
    func removalOrder() async throws {
        try await Self.withEngine { engine in
            _ = await engine.process(Self.plantRequest("Fern,0x36", "REQ_addNewPlant"), at: Self.now)
            let deleted = await engine.process(Self.plantRequest("Fern", "REQ_deletePlant"), at: Self.now)
            let state = try #require(deleted.firstIndex { $0.topic == "trellis/plants/1/state" })
            let removals = deleted.indices.filter { deleted[$0].topic.hasPrefix("homeassistant/") }
            #expect(removals.count == 4)
            #expect(removals.allSatisfy { $0 < state })
        }
    }
}
