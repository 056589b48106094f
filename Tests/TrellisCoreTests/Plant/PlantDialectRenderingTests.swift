import Foundation
import Testing
import TrellisCore

@Suite("Plant dialects: rendering answers")
struct PlantDialectRenderingTests {
    /// What the released app does with a payload before it parses it as JSON.
    static func appJSON(_ payload: String) -> [String: Any]? {
        let text = payload.replacingOccurrences(of: "--", with: ":").replacingOccurrences(of: "'", with: "\"")
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }

    @Test("a plant is written as the host's json.dumps with ':' as '--'")
    func plantInfoAsTheHostWroteIt() {
        let rendering = PlantDialect.original.render(.plants([PlantSummary(name: "Fern", sensors: ["0x36", "0x37"])]))
        #expect(rendering == .payloads([#"{"Name"-- "Fern", "Sensors"-- "[\"0x36\", \"0x37\"]"}"#]))
    }

    @Test("a sensor is written as the host's dict text, moisture and temperature whole")
    func sensorAsTheHostWroteIt() {
        let record = PlantSensorRecord(plant: "Fern", sensor: "0x36", moisture: 5, temperature: 70.4)
        #expect(
            PlantDialect.original.render(.sensorRecords([record]))
                == .payloads(["{'moisture'-- 5, 'temperature'-- 70, 'plant'-- 'Fern', 'sensor'-- '0x36'}"]))
    }

    @Test(
        "every name reaches the app as stored, and no payload has ';', ':' or a non-ASCII byte",
        arguments: [
            "Fern", "Bob's fern", "a--b", "a---b", "ends-", "a:b;c", "Café", "🌵", "quote\"d", "back\\slash", "100%",
            "tab\there"
        ])
    func namesSurvive(name: String) throws {
        guard
            case let .payloads(info) = PlantDialect.original.render(
                .plants([PlantSummary(name: name, sensors: ["0x36"])])),
            case let .payloads(data) = PlantDialect.original.render(
                .sensorRecords([
                    PlantSensorRecord(plant: name, sensor: "0x36", moisture: 3, temperature: -4.5)
                ]))
        else { Issue.record("no payloads"); return }
        for payload in info + data {
            #expect(!payload.contains(";") && !payload.contains(":"), "\(payload)")
            #expect(payload.utf8.allSatisfy { $0 < 0x80 }, "\(payload)")
        }
        let plant = try #require(Self.appJSON(info[0]))
        #expect(plant["Name"] as? String == name)
        let sensors = try #require(plant["Sensors"] as? String)
        #expect((try? JSONSerialization.jsonObject(with: Data(sensors.utf8))) as? [String] == ["0x36"])
        let reading = try #require(Self.appJSON(data[0]))
        #expect(reading["plant"] as? String == name)
        #expect(reading["moisture"] as? Int == 3)
        #expect(reading["temperature"] as? Int == -5)
    }

    @Test("original: a sensor that never reported is left out; none reported is ERR_noPlantDataToRequest")
    func unreported() {
        let reported = PlantSensorRecord(plant: "Basil", sensor: "0x37", moisture: 4, temperature: 68)
        let silent = PlantSensorRecord(plant: "Basil", sensor: "0x38")
        #expect(
            PlantDialect.original.render(.sensorRecords([silent, reported]))
                == .payloads(["{'moisture'-- 4, 'temperature'-- 68, 'plant'-- 'Basil', 'sensor'-- '0x37'}"]))
        #expect(PlantDialect.original.render(.sensorRecords([silent])) == .error(.noPlantDataToRequest))
        #expect(
            PlantDialect.lossless.render(.sensorRecords([silent])) == .payloads([PlantPayloads.sensorData([silent])]))
    }

    @Test(
        "original answers add, rename and delete with nothing; lossless with the name",
        arguments: [
            PlantResult.added("Fern"), .renamed("Fern"), .deleted("Fern")
        ])
    func silentSuccess(result: PlantResult) {
        #expect(PlantDialect.original.render(result) == .payloads([]))
        #expect(PlantDialect.lossless.render(result) == .payloads(["Fern"]))
    }

    @Test("original: one answer per plant; none at all is ERR_noPlantDataToRequest")
    func plantsOnePerMessage() {
        let plants = [PlantSummary(name: "A", sensors: ["0x36"]), PlantSummary(name: "B", sensors: ["0x37"])]
        guard case let .payloads(payloads) = PlantDialect.original.render(.plants(plants)) else {
            Issue.record("no payloads"); return
        }
        #expect(payloads.count == 2)
        #expect(PlantDialect.original.render(.plants([])) == .error(.noPlantDataToRequest))
        #expect(PlantDialect.lossless.render(.plants([])) == .payloads([#"{"count":0,"plants":[]}"#]))
    }

    @Test("original replies and errors carry ID 0 and the host's escape; lossless echoes the ID and percent-encodes")
    func errors() throws {
        let request = PlantMessage(
            id: "7", sender: "phone", receiver: "Host-RPI3B+", payload: "Fern--[\"0x36\"]", operation: "REQ_addNewPlant"
        )
        let original = PlantDialect.original.error(.plantNameTaken, for: request, hostName: "Host-RPI3B+")
        #expect(
            String(decoding: try #require(PlantDialect.original.wire(original)), as: UTF8.self)
                == #"ID:0;sender:Host-RPI3B+;receiver:phone;payload:ID--7|sender--phone|receiver--Host-RPI3B+|payload--Fern--["0x36"]|operation--REQ_addNewPlant;operation:ERR_plantNameTaken"#
        )
        let lossless = PlantDialect.lossless.error(.plantNameTaken, for: request, hostName: "Host-RPI3B+")
        #expect(
            String(decoding: try #require(PlantDialect.lossless.wire(lossless)), as: UTF8.self).hasPrefix(
                "ID:7;sender:Host-RPI3B+;receiver:phone;payload:ID%3A7%3B"))
        let reply = PlantDialect.original.reply(
            to: request, operation: .numPlants, payload: "2", hostName: "Host-RPI3B+")
        #expect(
            String(decoding: try #require(PlantDialect.original.wire(reply)), as: UTF8.self)
                == "ID:0;sender:Host-RPI3B+;receiver:phone;payload:2;operation:RES_numPlants")
    }

    @Test("original never sends a message with an empty field or a ';' or ':' in a value")
    func unsendable() {
        let empty = PlantMessage(id: "0", sender: "Host-RPI3B+", receiver: "", payload: "2", operation: "RES_numPlants")
        let colon = PlantMessage(
            id: "0", sender: "Host-RPI3B+", receiver: "a:b", payload: "2", operation: "RES_numPlants")
        #expect(PlantDialect.original.wire(empty) == nil)
        #expect(PlantDialect.original.wire(colon) == nil)
        #expect(PlantDialect.lossless.wire(empty) != nil)
    }
}
