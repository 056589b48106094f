import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisTestSupport

/// Readings stored, ordered and refused: the plant service's logic, on the relay's engine over
/// SQLite and PostgreSQL; a retained reading delivered again after a restart in
/// ``PlantRetainedReadingTests``.
@Suite("Plant sensor readings on the engine, over every store")
struct PlantSensorReadingTests {
    static let unreported = #"[{"at":null,"moisture":null,"plant":"Fern","sensor":"0x36","temperature":null}]"#

    /// An engine over a fresh store of `kind` with `Fern` on sensor 0x36, and the client that added it.
    static func withFern(
        _ kind: StoreKind, topics: PlantTopics = .shared, _ body: (EnginePhone) async throws -> Void
    ) async throws {
        try await withEngine(kind, settings: .losslessPlants) { harness in
            let phone = EnginePhone(harness, topics: topics)
            let added = try await phone.ask(phone.request("add", "REQ_addNewPlant", payload: "Fern,0x36"))
            #expect(added == Wire.reply("add", to: phone.name, "RES_addNewPlant", payload: "Fern"))
            try await body(phone)
        }
    }

    static func sensorData(_ phone: EnginePhone, id: String = "data") async throws -> String {
        try await phone.ask(phone.request(id, "REQ_plantSensorData", payload: "Fern"))
    }

    static func expectedData(_ id: String = "data", to name: String, _ json: String) -> String {
        Wire.reply(id, to: name, "RES_plantSensorData", payload: Wire.escape(json))
    }

    @Test(
        "a reading is stored under its normalized address; extra members are ignored",
        arguments: [
            (
                "rpi/sensors/0x36", #"{"moisture": 7, "temperature": 71.5, "at": "2026-05-01T10:00:00Z"}"#,
                #"[{"at":"2026-05-01T10:00:00.000Z","moisture":7,"plant":"Fern","sensor":"0x36","temperature":71.5}]"#
            ),
            (
                "rpi/sensors/0X36",
                #"{"moisture":10,"temperature":-3,"at":"2026-05-01T12:00:00.25+02:00","battery":{"v":[3.1]}}"#,
                #"[{"at":"2026-05-01T10:00:00.250Z","moisture":10,"plant":"Fern","sensor":"0x36","temperature":-3}]"#
            ),
            ("rpi/sensors/0x36", #"{"moisture":1.0,"temperature":200,"at":null,"note":"x"}"#, nil)
        ] as [(String, String, String?)],
        PlantTopics.onEveryStore)
    func storedReading(_ reading: (String, String, String?), _ route: (PlantTopics, StoreKind)) async throws {
        let (topic, payload, json) = reading
        let (topics, kind) = route
        try await Self.withFern(kind, topics: topics) { phone async throws in
            try await phone.send(payload, on: topic)
            let reply = try await Self.sensorData(phone)
            if let json {
                #expect(reply == Self.expectedData(to: phone.name, json))
            } else {
                // No `at`: Trellis stamps the time of receipt.
                let prefix = #"ID:data;sender:Host-RPI3B+;receiver:Bob's iPhone;payload:[{"at"%3A"20"#
                #expect(reply.hasPrefix(prefix))
                #expect(
                    reply.hasSuffix(
                        #"Z","moisture"%3A1,"plant"%3A"Fern","sensor"%3A"0x36","temperature"%3A200}];operation:RES_plantSensorData"#
                    ))
            }
            #expect(try phone.deadLetters().isEmpty)
        }
    }

    @Test("the newest reading wins, whatever order they arrive in", arguments: StoreKind.bothStores)
    func newestWins(_ kind: StoreKind) async throws {
        try await Self.withFern(kind) { phone async throws in
            /// Asks for the sensor data as request `id` and expects `record` alone.
            func expectSensorData(_ id: String, _ record: String) async throws {
                #expect(
                    try await Self.sensorData(phone, id: id) == Self.expectedData(id, to: phone.name, "[\(record)]"))
            }
            try await phone.send(
                #"{"moisture":5,"temperature":60,"at":"2026-05-01T10:00:00Z"}"#, on: "rpi/sensors/0x36")
            try await phone.send(
                #"{"moisture":3,"temperature":50,"at":"2026-04-30T10:00:00Z"}"#, on: "rpi/sensors/0x36")
            try await expectSensorData(
                "1", #"{"at":"2026-05-01T10:00:00.000Z","moisture":5,"plant":"Fern","sensor":"0x36","temperature":60}"#)
            try await phone.send(
                #"{"moisture":9,"temperature":65.25,"at":"2026-05-02T08:30:00.5Z"}"#, on: "rpi/sensors/0x36")
            try await expectSensorData(
                "2",
                #"{"at":"2026-05-02T08:30:00.500Z","moisture":9,"plant":"Fern","sensor":"0x36","temperature":65.25}"#)
        }
    }

    @Test(
        "a bad reading is dead-lettered with its reason and changes nothing",
        arguments: [
            ("rpi/sensors/0x36", "not json", "invalid_json"),
            ("rpi/sensors/0x36", "", "invalid_json"),
            ("rpi/sensors/0x36", "[7, 70]", "not_an_object"),
            ("rpi/sensors/0x36", #"{"temperature":70}"#, "missing_moisture"),
            ("rpi/sensors/0x36", #"{"moisture":"7","temperature":70}"#, "invalid_moisture"),
            ("rpi/sensors/0x36", #"{"moisture":7.5,"temperature":70}"#, "moisture_not_integer"),
            ("rpi/sensors/0x36", #"{"moisture":0,"temperature":70}"#, "moisture_out_of_range"),
            ("rpi/sensors/0x36", #"{"moisture":11,"temperature":70}"#, "moisture_out_of_range"),
            ("rpi/sensors/0x36", #"{"moisture":7}"#, "missing_temperature"),
            ("rpi/sensors/0x36", #"{"moisture":7,"temperature":null}"#, "invalid_temperature"),
            ("rpi/sensors/0x36", #"{"moisture":7,"temperature":250}"#, "temperature_out_of_range"),
            ("rpi/sensors/0x36", #"{"moisture":7,"temperature":70,"at":"yesterday"}"#, "invalid_at"),
            ("rpi/sensors/0x36", #"{"moisture":7,"temperature":70,"at":1714557600}"#, "invalid_at"),
            ("rpi/sensors/0x78", #"{"moisture":7,"temperature":70}"#, "invalid_sensor_address"),
            ("rpi/sensors/0x2", #"{"moisture":7,"temperature":70}"#, "invalid_sensor_address"),
            ("rpi/sensors/fern", #"{"moisture":7,"temperature":70}"#, "invalid_sensor_address")
        ], StoreKind.bothStores)
    func badReading(_ bad: (topic: String, payload: String, reason: String), _ kind: StoreKind) async throws {
        let (topic, payload, reason) = bad
        try await Self.withFern(kind) { phone async throws in
            try await phone.send(payload, on: topic)
            #expect(try await Self.sensorData(phone) == Self.expectedData(to: phone.name, Self.unreported))

            let letters = try phone.deadLetters()
            #expect(letters.count == 1)
            #expect(letters.first?.reason == reason)
            #expect(letters.first?.topic == topic)
            #expect(letters.first?.payload == payload)
        }
    }

    @Test("a reading that is not UTF-8 is dead-lettered as base64", arguments: StoreKind.bothStores)
    func invalidUTF8Reading(_ kind: StoreKind) async throws {
        try await Self.withFern(kind) { phone async throws in
            let bytes: [UInt8] =
                Array(#"{"moisture":7,"temperature":70,"x":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8)
            try await phone.send(bytes, on: "rpi/sensors/0x36")
            #expect(try await Self.sensorData(phone) == Self.expectedData(to: phone.name, Self.unreported))

            let letters = try phone.deadLetters()
            #expect(letters.map(\.reason) == ["invalid_utf8"])
            #expect(letters.first?.payloadBase64 == Data(bytes).base64EncodedString())
        }
    }
}

/// A retained reading delivered again when Trellis subscribes anew: as the broker hands it over on
/// each subscription (the retain flag set), to the engine started again on its store.
@Suite("Plant sensor readings: a retained reading, across restarts")
struct PlantRetainedReadingTests {
    @Test(
        "a retained reading without a time is not re-stamped as new when it is delivered again",
        arguments: StoreKind.bothStores)
    func retainedReadingWithoutTime(_ kind: StoreKind) async throws {
        try await withRestarts(kind, settings: .losslessPlants) { started, restart async throws in
            var phone = EnginePhone(started.harness)
            let added = try await phone.ask(phone.request("add", "REQ_addNewPlant", payload: "Fern,0x36"))
            #expect(added == Wire.reply("add", to: phone.name, "RES_addNewPlant", payload: "Fern"))
            // Published retained, it reaches Trellis live with the retain flag clear.
            let reading = #"{"moisture":6,"temperature":70}"#
            try await phone.send(reading, on: "rpi/sensors/0x36")
            let first = try await phone.sensorData(id: "1")
            #expect(first.contains(#""moisture"%3A6"#))

            // On a restart Trellis subscribes again and the broker hands it the retained reading,
            // which says nothing about when it was taken.
            phone = EnginePhone(try await restart().harness)
            try await phone.send(reading, on: "rpi/sensors/0x36", retain: true)
            let second = try await phone.sensorData(id: "2")
            #expect(second == first.replacingOccurrences(of: "ID:1;", with: "ID:2;"))
            let letters = try phone.deadLetters()
            #expect(letters.map(\.reason) == ["retained_reading_without_at"])
            #expect(letters.first?.payload == reading)

            // A retained reading that carries its time is used: the store keeps the newest one.
            let at = ISO8601Time.format(Date().addingTimeInterval(60))
            let dated = #"{"moisture":2,"temperature":60,"at":"\#(at)"}"#
            phone = EnginePhone(try await restart().harness)
            try await phone.send(dated, on: "rpi/sensors/0x36", retain: true)
            #expect(
                try await phone.sensorData(id: "3")
                    == phone.sensorDataReply(
                        id: "3",
                        #"[{"at":"\#(at)","moisture":2,"plant":"Fern","sensor":"0x36","temperature":60}]"#))
            #expect(try phone.deadLetters().isEmpty)
        }
    }
}
