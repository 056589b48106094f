import Foundation
import Testing
import TrellisCore

@Suite("RES_plantSensorData written by hand equals JSONEncoder's output")
struct PlantSensorDataRenderingTests {
    static func encoderOutput(_ records: [PlantSensorRecord]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(records), as: UTF8.self)
    }

    static let at = Date(timeIntervalSince1970: 1_795_430_465.25)

    @Test(
        "records",
        arguments: [
            [PlantSensorRecord](),
            [PlantSensorRecord(plant: "Fern", sensor: "0x36", moisture: 4, temperature: 70, at: at)],
            [
                PlantSensorRecord(plant: "Fern", sensor: "0x36"),
                PlantSensorRecord(plant: "Ivy", sensor: "0x37", moisture: 10, temperature: -3.5, at: at)
            ],
            [PlantSensorRecord(plant: "a\"b\\c\u{01}d\ne/f", sensor: "0x40", moisture: 1, temperature: 70.125, at: at)],
            [PlantSensorRecord(plant: "Küche 🌿", sensor: "0x41", moisture: 2, temperature: 1e-7, at: at)],
            [PlantSensorRecord(plant: "big", sensor: "0x42", moisture: 3, temperature: 1e20, at: nil)]
        ])
    func matches(records: [PlantSensorRecord]) throws {
        #expect(PlantPayloads.sensorData(records) == (try Self.encoderOutput(records)))
    }

    @Test("percent encoding appended byte by byte equals the String form")
    func percent() {
        for text in ["plain", "a:b;c%d", "é:%C3", ""] {
            var bytes: [UInt8] = []
            PlantPercentEncoding.append(text, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == PlantPercentEncoding.encode(text))
        }
        let message = PlantMessage(id: "1", sender: "a", receiver: "b", payload: "x:y;z%", operation: "RES_x")
        #expect(message.encodedBytes() == Array(message.encoded().utf8))
    }
}

@Suite("Device log entries written by hand equal JSONEncoder's output")
struct DeviceLogEntryRenderingTests {
    @Test(
        "entries",
        arguments: [
            DeviceLogEntry(timestamp: Date(timeIntervalSince1970: 1_795_430_465.25), type: "Device", message: "line 1"),
            DeviceLogEntry(
                timestamp: Date(timeIntervalSince1970: 0), type: "Status",
                message: "quote \" back\\slash\ttab\u{1} / é 🌿"),
            DeviceLogEntry(timestamp: Date(timeIntervalSince1970: 1_795_430_465), type: "", message: "")
        ])
    func matches(entry: DeviceLogEntry) {
        #expect(DevicePayloads.logEntry(entry) == JSONEnvelope.encode(entry))
    }
}
