import Testing
@testable import TrellisCore

@Suite("Plant dialects: reading request payloads")
struct PlantDialectReadingTests {
    @Test(
        "the original app's refresh asks by index; lossless reads the same payload as a name",
        arguments: [
            ("0", PlantDialect.original, PlantInfoQuery.index(0)),
            (" 6 ", .original, .index(6)),
            ("12", .original, .index(12)),
            ("-1", .original, .plant("-1")),
            ("", .original, .all),
            ("all", .original, .all),
            ("Fern", .original, .plant("Fern")),
            ("0", .lossless, .plant("0")),
            ("", .lossless, .all)
        ])
    func plantInfo(payload: String, dialect: PlantDialect, query: PlantInfoQuery) {
        #expect(dialect.read(.plantInfoOnStartup, payload: payload) == .success(.plantInfo(query)))
    }

    @Test(
        "the app's add, name--[…], with addresses read as int(x, 16)",
        arguments: [
            (#"Fern--["0x36"]"#, "Fern", ["0x36"]),
            (#"Basil--["37", "0x38"]"#, "Basil", ["0x37", "0x38"]),
            (#"Basil--["0x37", "37"]"#, "Basil", ["0x37"]),
            (#"Mint--[" 3a ", "0X3B"]"#, "Mint", ["0x3a", "0x3b"]),
            (#"a--b--["0x36"]"#, "a--b", ["0x36"]),
            (#"Bob's fern--["0x36"]"#, "Bob's fern", ["0x36"]),
            ("Fern,36,0x37", "Fern", ["0x36", "0x37"])
        ])
    func appAdd(payload: String, name: String, sensors: [String]) {
        #expect(
            PlantDialect.original.read(.addNewPlant, payload: payload)
                == .success(.addPlant(NewPlantRequest(name: name, sensors: sensors))))
    }

    @Test(
        "the app's add keeps the shared order of errors",
        arguments: [
            (#"--["0x36"]"#, PlantErrorTag.missingVals),
            (#"A very long plant name--["zz"]"#, .plantNameTooLong),
            (#"Fern, big--["0x36"]"#, .missingVals),
            ("Fern--[]", .invalidPlantSensorID),
            (#"Fern--["0x78"]"#, .invalidPlantSensorID),
            (#"Fern--["2"]"#, .invalidPlantSensorID),
            (#"Fern--["0x36", ""]"#, .invalidPlantSensorID),
            (#"Fern--["0x36"#, .invalidPlantSensorID),
            (#"Fern--["-36"]"#, .invalidPlantSensorID)
        ])
    func appAddErrors(payload: String, tag: PlantErrorTag) {
        #expect(PlantDialect.original.read(.addNewPlant, payload: payload) == .failure(tag))
    }

    @Test(
        "lossless adds still require 0x",
        arguments: [("Fern,0x36", true), ("Fern,36", false), (#"Fern--["0x36"]"#, false)])
    func losslessAdd(payload: String, accepted: Bool) {
        let result = PlantDialect.lossless.read(.addNewPlant, payload: payload)
        #expect(((try? result.get()) != nil) == accepted)
    }

    @Test("REQ_editPlant is <old>,<new> in both dialects", arguments: PlantDialect.allCases)
    func rename(dialect: PlantDialect) {
        #expect(
            dialect.read(.editPlant, payload: "Basil,Thai Basil")
                == .success(.renamePlant(PlantRename(old: "Basil", new: "Thai Basil"))))
        #expect(
            dialect.read(.editPlant, payload: " Basil , Thai Basil ")
                == .success(.renamePlant(PlantRename(old: "Basil", new: "Thai Basil"))))
        #expect(dialect.read(.editPlant, payload: "Basil") == .failure(.missingVals))
        #expect(dialect.read(.editPlant, payload: ",Mint") == .failure(.cannotDeletePlant))
        #expect(dialect.read(.editPlant, payload: "Basil,") == .failure(.missingVals))
        #expect(dialect.read(.editPlant, payload: "Basil,Mint,Sage") == .failure(.missingVals))
        #expect(dialect.read(.editPlant, payload: "Basil,Boston Sword Fern") == .failure(.plantNameTooLong))
    }

    @Test(
        "a swift array's description is read back into its strings",
        arguments: [
            (#"["0x36", "0x37"]"#, ["0x36", "0x37"]),
            (#"["a\"b", "c\\d"]"#, [#"a"b"#, #"c\d"#]),
            ("[36, 37]", ["36", "37"]),
            ("[]", []),
            ("36,37", ["36", "37"]),
            (#"[ "0x36" , 37 ]"#, ["0x36", "37 "])
        ])
    func arrayDescription(text: String, strings: [String]) {
        #expect(SwiftArrayDescription.strings(text) == strings)
    }

    @Test("an unclosed or trailing-garbage element is no list", arguments: [#"["0x36"#, #"["0x36"x]"#])
    func badArrayDescription(text: String) {
        #expect(SwiftArrayDescription.strings(text) == nil)
    }
}
