import Testing
@testable import TrellisCore

@Suite("REQ_addNewPlant payloads, plant names and sensor queries")
struct NewPlantRequestTests {
    @Test(
        "valid payloads",
        arguments: [
            ("Fern,0x36", "Fern", ["0x36"]),
            (" Fern , 0X3A ", "Fern", ["0x3a"]),
            ("Fern,0x36,0x37", "Fern", ["0x36", "0x37"]),
            ("Fern,0x37,0x36", "Fern", ["0x37", "0x36"]),
            ("Fern,0x36,0X36,0x36", "Fern", ["0x36"]),
            ("Big Leaf Maple,0x03,0x77", "Big Leaf Maple", ["0x03", "0x77"]),
            ("ABCDEFGHIJKLMNO,0x36", "ABCDEFGHIJKLMNO", ["0x36"]),
            ("Fougère 🌿🌿🌿🌿🌿🌿🌿,0x5", "Fougère 🌿🌿🌿🌿🌿🌿🌿", ["0x05"]),
            ("Bob's basil,0xA", "Bob's basil", ["0x0a"])
        ])
    func valid(_ payload: String, _ name: String, _ sensors: [String]) {
        #expect(NewPlantRequest.parse(payload) == .success(NewPlantRequest(name: name, sensors: sensors)))
    }

    @Test(
        "invalid payloads and the error each gives",
        arguments: [
            ("", PlantErrorTag.missingVals),
            (",0x36", .missingVals),
            ("   ,0x36", .missingVals),
            ("Fern", .invalidPlantSensorID),
            ("Fern,", .invalidPlantSensorID),
            ("Fern,0x36,", .invalidPlantSensorID),
            ("Fern,,0x36", .invalidPlantSensorID),
            ("Fern,0x02", .invalidPlantSensorID),
            ("Fern,0x78", .invalidPlantSensorID),
            ("Fern,0xFF", .invalidPlantSensorID),
            ("Fern,36", .invalidPlantSensorID),
            ("Fern,0x", .invalidPlantSensorID),
            ("Fern,0x036", .invalidPlantSensorID),
            ("Fern,0xGG", .invalidPlantSensorID),
            ("Fern,0x36,bad", .invalidPlantSensorID),
            ("Fern;0x36", .invalidPlantSensorID),
            ("ABCDEFGHIJKLMNOP,0x36", .plantNameTooLong),
            ("ABCDEFGHIJKLMNOP,bad", .plantNameTooLong),
            ("🌿🌿🌿🌿🌿🌿🌿🌿🌿🌿🌿🌿🌿🌿🌿🌿,0x36", .plantNameTooLong)
        ])
    func invalid(_ payload: String, _ tag: PlantErrorTag) {
        #expect(NewPlantRequest.parse(payload) == .failure(tag))
    }

    @Test(
        "plant name rules: a valid name trimmed, an invalid one with the error it gives",
        arguments: [
            ("Fern", .success("Fern")),
            ("  Fern\n", .success("Fern")),
            ("Fern  Two", .success("Fern  Two")),
            ("Café", .success("Café")),
            ("ABCDEFGHIJKLMNO", .success("ABCDEFGHIJKLMNO")),
            ("", .failure(.missingVals)),
            ("   ", .failure(.missingVals)),
            ("ABCDEFGHIJKLMNOP", .failure(.plantNameTooLong))
        ] as [(String, Result<String, PlantErrorTag>)])
    func names(_ input: String, _ expected: Result<String, PlantErrorTag>) {
        #expect(PlantName.validate(input) == expected)
    }

    @Test(
        "sensor data queries",
        arguments: [
            ("all", PlantSensorQuery.all),
            ("", .all),
            (" all ", .all),
            ("Fern", .plant("Fern")),
            (" Fern ", .plant("Fern")),
            ("All", .plant("All")),
            ("\u{A0}Fern\u{2003}", .plant("Fern")),
            ("\tall\n", .all),
            ("Fern\u{A0}", .plant("Fern")),
            ("F", .plant("F"))
        ])
    func sensorQuery(_ payload: String, _ expected: PlantSensorQuery) {
        #expect(PlantSensorQuery(payload: payload) == expected)
    }
}
