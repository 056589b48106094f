import Testing
@testable import TrellisCore

@Suite("Catalog: USDA characteristics CSV")
struct CatalogCSVTests {
    static let header =
        #"Accepted Symbol,Symbol,Scientific Name,Common Name,Moisture Use,Shade Tolerance,"Temperature, Minimum (°F)",Duration"#

    @Test("a small USDA download with bad rows: good rows kept, each bad row skipped with its line and reason")
    func smallFileWithBadRows() throws {
        let text = #"""
            \#(Self.header)
            ACRU,ACRU,Acer rubrum,red maple,High,Tolerant,-38,Perennial
            ,YUFI,Yucca filamentosa,"Adam's needle, ""spoonleaf""",Low,Intolerant,-23,Perennial

            ,BAD1,Badus one,bad,Soggy,Tolerant,-3,
            ,BAD2,Badus two,bad,Low,Tolerant,cold,
            ,,No symbol,none,Low,Tolerant,1,
            ,OCBA,Ocimum basilicum,,medium, intolerant ,33
            """#
        let result = try USDACharacteristicsCSV.parse(text)
        #expect(result.species.map(\.symbol) == ["ACRU", "YUFI", "OCBA"])
        #expect(result.species[1].commonName == #"Adam's needle, "spoonleaf""#)
        #expect(
            result.species[2]
                == Species(
                    symbol: "OCBA", scientificName: "Ocimum basilicum", commonName: "",
                    moistureUse: .medium, shadeTolerance: .intolerant, minTempF: 33))
        #expect(
            result.skipped == [
                .init(line: 5, reason: #"Moisture Use "Soggy" is not Low, Medium or High"#),
                .init(line: 6, reason: #"Temperature, Minimum (°F) "cold" is not a number from -100 to 150"#),
                .init(line: 7, reason: "no Symbol")
            ])
    }

    @Test(
        "row problems and their reasons",
        arguments: [
            ("acru,Acer rubrum,x,High,Tolerant,-38", #"Symbol "acru" is not 1–16 upper-case letters and digits"#),
            ("ACRU,,x,High,Tolerant,-38", "no Scientific Name"),
            ("ACRU,Acer rubrum,x,,Tolerant,-38", "no Moisture Use value"),
            ("ACRU,Acer rubrum,x,High,,-38", "no Shade Tolerance value"),
            (
                "ACRU,Acer rubrum,x,High,Sunny,-38",
                #"Shade Tolerance "Sunny" is not Tolerant, Intermediate or Intolerant"#
            ),
            ("ACRU,Acer rubrum,x,High,Tolerant,", "no Temperature, Minimum (°F) value"),
            (
                "ACRU,Acer rubrum,x,High,Tolerant,-300",
                #"Temperature, Minimum (°F) "-300" is not a number from -100 to 150"#
            )
        ])
    func rowProblems(row: String, reason: String) throws {
        let text =
            "Symbol,Scientific Name,Common Name,Moisture Use,Shade Tolerance,\"Temperature, Minimum (°F)\"\n\(row)\n"
        let result = try USDACharacteristicsCSV.parse(text)
        #expect(result.species.isEmpty)
        #expect(result.skipped == [.init(line: 2, reason: reason)])
    }

    @Test(
        "a file without the needed columns is refused, naming them",
        arguments: [
            ("Symbol,Common Name,Moisture Use", ["Scientific Name", "Shade Tolerance", "Temperature, Minimum (°F)"]),
            (
                "Accepted Symbol,Scientific Name,Common Name,Moisture Use,Shade Tolerance,\"Temperature, Minimum (°F)\"",
                ["Symbol"]
            )
        ])
    func missingColumns(header: String, missing: [String]) {
        #expect(throws: USDACharacteristicsCSV.Failure.missingColumns(missing)) {
            try USDACharacteristicsCSV.parse(header + "\nA,b,c\n")
        }
    }

    @Test("an empty file and an unclosed quote are refused")
    func refusedFiles() {
        #expect(throws: USDACharacteristicsCSV.Failure.empty) { try USDACharacteristicsCSV.parse("") }
        #expect(throws: USDACharacteristicsCSV.Failure.unterminatedQuote(line: 2)) {
            try USDACharacteristicsCSV.parse("a,b\n\"x,y\nz\n")
        }
    }

    @Test("quoted line breaks keep the line numbers of later rows right; CRLF and a BOM are read")
    func lineNumbers() throws {
        let text =
            "\u{FEFF}symbol,SCIENTIFIC NAME,Common Name,Moisture Use,Shade Tolerance,\"Temperature, Minimum (°F)\"\r\n"
            + "ACRU,Acer rubrum,\"red\r\nmaple\",High,Tolerant,-38\r\n"
            + "BAD,x,y,High,Tolerant,z\r\n"
        let result = try USDACharacteristicsCSV.parse(text)
        #expect(result.species.map(\.commonName) == ["red\r\nmaple"])
        #expect(result.skipped.map(\.line) == [4])
    }
}
