import Testing
@testable import TrellisCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

private let readingTime = Date(timeIntervalSince1970: 1_795_344_065.123)

@Suite("Reply payload renderers")
struct PlantPayloadsTests {
    @Test(
        "plant info",
        arguments: [
            ([PlantSummary](), #"{"count":0,"plants":[]}"#),
            (
                [PlantSummary(name: "Fern", sensors: ["0x36"])],
                #"{"count":1,"plants":[{"name":"Fern","sensors":["0x36"]}]}"#
            ),
            (
                [
                    PlantSummary(name: "Fern", sensors: ["0x36"]),
                    PlantSummary(name: "Basil/Thai", sensors: ["0x37", "0x38"])
                ],
                #"{"count":2,"plants":[{"name":"Fern","sensors":["0x36"]},{"name":"Basil/Thai","sensors":["0x37","0x38"]}]}"#
            ),
            (
                [PlantSummary(name: "Fougère \"🌿\"", sensors: [])],
                #"{"count":1,"plants":[{"name":"Fougère \"🌿\"","sensors":[]}]}"#
            )
        ])
    func plantInfo(_ plants: [PlantSummary], _ expected: String) {
        #expect(PlantPayloads.plantInfo(plants) == expected)
    }

    @Test(
        "sensor data",
        arguments: [
            ([PlantSensorRecord](), "[]"),
            (
                [PlantSensorRecord(plant: "Fern", sensor: "0x36", moisture: 5, temperature: 71.5, at: readingTime)],
                #"[{"at":"2026-11-22T10:41:05.123Z","moisture":5,"plant":"Fern","sensor":"0x36","temperature":71.5}]"#
            ),
            (
                [PlantSensorRecord(plant: "Fern", sensor: "0x37")],
                #"[{"at":null,"moisture":null,"plant":"Fern","sensor":"0x37","temperature":null}]"#
            ),
            (
                [
                    PlantSensorRecord(
                        plant: "Fern", sensor: "0x36", moisture: 10, temperature: -3, at: Date(timeIntervalSince1970: 0)
                    ),
                    PlantSensorRecord(plant: "Basil/Thai", sensor: "0x40")
                ],
                #"[{"at":"1970-01-01T00:00:00.000Z","moisture":10,"plant":"Fern","sensor":"0x36","temperature":-3},"#
                    + #"{"at":null,"moisture":null,"plant":"Basil/Thai","sensor":"0x40","temperature":null}]"#
            )
        ])
    func sensorData(_ records: [PlantSensorRecord], _ expected: String) {
        #expect(PlantPayloads.sensorData(records) == expected)
    }

    @Test("records from reports fall back to the receive time only when the report has none")
    func recordFromReport() {
        let received = Date(timeIntervalSince1970: 1_795_344_100)
        let withTime = SensorReport(moisture: 4, temperature: 60, at: readingTime)
        let withoutTime = SensorReport(moisture: 4, temperature: 60)
        #expect(
            PlantSensorRecord(plant: "Fern", sensor: "0x36", report: withTime, receivedAt: received)
                == PlantSensorRecord(plant: "Fern", sensor: "0x36", moisture: 4, temperature: 60, at: readingTime))
        #expect(
            PlantSensorRecord(plant: "Fern", sensor: "0x36", report: withoutTime, receivedAt: received)
                == PlantSensorRecord(plant: "Fern", sensor: "0x36", moisture: 4, temperature: 60, at: received))
        #expect(
            PlantSensorRecord(plant: "Fern", sensor: "0x36", report: nil, receivedAt: received)
                == PlantSensorRecord(plant: "Fern", sensor: "0x36"))
    }

    @Test("num plants is decimal text", arguments: [(0, "0"), (7, "7"), (12, "12")])
    func numPlants(_ count: Int, _ expected: String) {
        #expect(PlantPayloads.numPlants(count) == expected)
    }

    @Test("rendering is deterministic")
    func deterministic() {
        let plants = (0..<7).map { PlantSummary(name: "Plant \($0)", sensors: ["0x3\($0)", "0x4\($0)"]) }
        let first = PlantPayloads.plantInfo(plants)
        for _ in 0..<20 {
            #expect(PlantPayloads.plantInfo(plants) == first)
        }
    }
}

@Suite("ISO 8601 timestamps")
struct PlantTimestampTests {
    @Test(
        "parsing accepted forms",
        arguments: [
            ("2026-11-22T10:41:05Z", 1_795_344_065.0),
            ("2026-11-22T10:41:05.123Z", 1_795_344_065.123),
            ("2026-11-22T10:41:05.1Z", 1_795_344_065.1),
            ("2026-11-22T10:41:05.123456789Z", 1_795_344_065.123456789),
            ("2026-11-22T12:41:05+02:00", 1_795_344_065.0),
            ("2026-11-22T05:11:05-05:30", 1_795_344_065.0),
            ("2026-11-22T10:41:05.250+00:00", 1_795_344_065.25),
            ("1970-01-01T00:00:00Z", 0),
            ("2024-02-29T00:00:00Z", 1_709_164_800),
            ("2000-02-29T00:00:00Z", 951_782_400),
            ("1969-12-31T23:59:59Z", -1)
        ])
    func parse(_ text: String, _ seconds: Double) throws {
        let date = try #require(PlantTimestamp.parse(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.000_001)
    }

    @Test(
        "parsing rejected forms",
        arguments: [
            "", "2026-11-22", "2026-11-22 10:41:05Z", "2026-11-22T10:41Z", "2026-11-22T24:00:00Z",
            "2026-11-22T10:60:00Z", "2026-11-22T10:41:60Z", "2026-02-29T00:00:00Z", "1900-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z", "2026-00-10T00:00:00Z", "2026-11-22T10:41:05.Z", "2026-11-22T10:41:05+0200",
            "2026-11-22T10:41:05+02", "2026-11-22T10:41:05Zjunk", "2026-11-22T10:41:05.1234567890Z",
            "26-11-22T10:41:05Z", "2026-11-22T10:41:05z", "2026-11-22t10:41:05Z", "2026-11-22T10:41:05+24:00"
        ])
    func rejects(_ text: String) {
        #expect(PlantTimestamp.parse(text) == nil)
    }

    @Test(
        "formatting is UTC with milliseconds",
        arguments: [
            (1_795_344_065.123, "2026-11-22T10:41:05.123Z"),
            (1_795_344_065, "2026-11-22T10:41:05.000Z"),
            (1_795_344_065.9996, "2026-11-22T10:41:06.000Z"),
            (0, "1970-01-01T00:00:00.000Z"),
            (-0.5, "1969-12-31T23:59:59.500Z"),
            (951_782_400.007, "2000-02-29T00:00:00.007Z"),
            (253_402_300_799.999, "9999-12-31T23:59:59.999Z")
        ])
    func format(_ seconds: Double, _ expected: String) {
        #expect(PlantTimestamp.format(Date(timeIntervalSince1970: seconds)) == expected)
        #expect(PlantPayloads.timestamp(Date(timeIntervalSince1970: seconds)) == expected)
    }

    @Test("format then parse returns the same millisecond")
    func roundTrip() throws {
        for seconds in stride(from: -86_400.0 * 400, through: 86_400.0 * 365 * 80, by: 86_400.0 * 37.3) {
            let date = Date(timeIntervalSince1970: (seconds * 1000).rounded() / 1000)
            let parsed = try #require(PlantTimestamp.parse(PlantTimestamp.format(date)))
            #expect(abs(parsed.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.000_5)
        }
    }
}
