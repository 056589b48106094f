import Foundation
import Testing
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// One request that Trellis must answer with an `ERR_` tag.
struct PlantErrorCase: Sendable, CustomTestStringConvertible {
    static let sender = "Bob's iPhone"

    var label: String
    /// `REQ_addNewPlant` payloads sent (and answered) first.
    var plants: [String] = []
    var maxPlants = 7
    /// The offending message, exactly as sent.
    var message: String
    /// The ID the error answer must carry: the request's own, or `0` when it cannot be recovered.
    var id: String
    var tag: String

    var testDescription: String { "\(tag): \(label)" }

    static func request(_ id: String, _ operation: String, _ payload: String = "") -> String {
        Wire.request(id, from: sender, operation, payload: payload)
    }

    static let all: [PlantErrorCase] = [
        .init(
            label: "four keys", message: "ID:1;sender:Bob's iPhone;receiver:Host-RPI3B+;payload:all", id: "1",
            tag: "ERR_hashLength"),
        .init(label: "six keys", message: request("2", "REQ_numPlants") + ";extra:1", id: "2", tag: "ERR_hashLength"),
        .init(
            label: "five pieces, a key repeated",
            message: "ID:3;sender:Bob's iPhone;receiver:Host-RPI3B+;payload:a;payload:b",
            id: "3", tag: "ERR_hashLength"),
        .init(
            label: "a piece without ':'",
            message: "ID:4;sender:Bob's iPhone;receiver:Host-RPI3B+;payload;operation:REQ_numPlants",
            id: "4", tag: "ERR_missingVals"),
        .init(
            label: "the bad piece before sender",
            message: "ID:5;oops;sender:Bob's iPhone;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants",
            id: "5", tag: "ERR_missingVals"),
        .init(
            label: "an empty plant name", message: request("6", "REQ_addNewPlant", " ,0x36"), id: "6",
            tag: "ERR_missingVals"),
        .init(
            label: "a piece with two ':'", message: request("7", "REQ_numPlants", "12:30"), id: "7",
            tag: "ERR_missingKeys"),
        .init(
            label: "two ':' in the ID, before sender",
            message: "ID:8:x;sender:Bob's iPhone;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants",
            id: "0", tag: "ERR_missingKeys"),
        .init(
            label: "a key in the wrong case",
            message: "id:9;sender:Bob's iPhone;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants",
            id: "0", tag: "ERR_missingKeys"),
        .init(label: "an unknown REQ_", message: request("10", "REQ_waterPlant"), id: "10", tag: "ERR_invalidOpTag"),
        .init(
            label: "a RES_ from a client", message: request("11", "RES_numPlants", "3"), id: "11",
            tag: "ERR_invalidOpTag"),
        .init(
            label: "sensor data without plants", message: request("12", "REQ_plantSensorData", "all"), id: "12",
            tag: "ERR_noPlantDataToRequest"),
        .init(
            label: "sensor data of an unknown plant", plants: ["Fern,0x36"],
            message: request("13", "REQ_plantSensorData", "Rose"),
            id: "13", tag: "ERR_noPlantDataToRequest"),
        .init(
            label: "info on an unknown plant", plants: ["Fern,0x36"],
            message: request("14", "REQ_plantInfoOnStartup", "Rose"),
            id: "14", tag: "ERR_noPlantDataToRequest"),
        .init(
            label: "the same name again", plants: ["Fern,0x36"], message: request("15", "REQ_addNewPlant", "Fern,0x37"),
            id: "15", tag: "ERR_plantNameTaken"),
        .init(
            label: "16 characters", message: request("16", "REQ_addNewPlant", "ABCDEFGHIJKLMNOP,0x36"), id: "16",
            tag: "ERR_plantNameTooLong"),
        .init(
            label: "a third plant with maxPlants 2", plants: ["A,0x36", "B,0x37"], maxPlants: 2,
            message: request("17", "REQ_addNewPlant", "C,0x38"), id: "17", tag: "ERR_tooManyPlants"),
        .init(
            label: "an eighth plant by default", plants: (1...7).map { "P\($0),0x36" },
            message: request("18", "REQ_addNewPlant", "P8,0x36"), id: "18", tag: "ERR_tooManyPlants"),
        .init(
            label: "0x78", message: request("19", "REQ_addNewPlant", "Fern,0x78"), id: "19",
            tag: "ERR_invalidPlantSensorID"),
        .init(
            label: "0x02", message: request("20", "REQ_addNewPlant", "Fern,0x02"), id: "20",
            tag: "ERR_invalidPlantSensorID"),
        .init(
            label: "no sensor", message: request("21", "REQ_addNewPlant", "Fern"), id: "21",
            tag: "ERR_invalidPlantSensorID"),
        .init(
            label: "decimal 36", message: request("22", "REQ_addNewPlant", "Fern,36"), id: "22",
            tag: "ERR_invalidPlantSensorID"),
        .init(
            label: "an empty sensor entry", message: request("23", "REQ_addNewPlant", "Fern,0x36,"), id: "23",
            tag: "ERR_invalidPlantSensorID"),
        .init(
            label: "an unknown plant", plants: ["Fern,0x36"], message: request("24", "REQ_deletePlant", "Rose"),
            id: "24", tag: "ERR_cannotDeletePlant"),
        .init(
            label: "an empty name", plants: ["Fern,0x36"], message: request("25", "REQ_deletePlant"), id: "25",
            tag: "ERR_cannotDeletePlant")
    ]
}

/// Each error case on the relay's engine, over every store kind: the logic alone, no broker (the
/// broker path of an error answer is in `PlantUnansweredTests` and `PlantTrackerAppSessionTests`).
@Suite("Plant tracker error tags")
struct PlantErrorTagTests {
    /// `text` from `PlantErrorCase.sender` on `topics`' request topic; the replies on its reply topic
    /// and the dead letters, decoded.
    static func ask(_ engine: EngineHarness, _ text: String, _ topics: PlantTopics)
        async throws -> (replies: [String], deadLetters: [DeadLetterRecord])
    {
        let sender = PlantErrorCase.sender
        let published = await engine.send(text, on: topics.request(for: sender))
        let replies = published.filter { $0.topic == topics.reply(for: sender) }.map { $0.text ?? "<not UTF-8>" }
        let letters = try published.filter { $0.topic == PlantClient.deadLetterTopic }.map {
            try JSONDecoder().decode(DeadLetterRecord.self, from: Data($0.payload))
        }
        return (replies, letters)
    }

    @Test(
        "the offending message comes back under its ERR_ tag, and is dead-lettered",
        arguments: PlantErrorCase.all, PlantTopics.allCases)
    func errorTag(_ error: PlantErrorCase, _ topics: PlantTopics) async throws {
        var settings = RelaySettings.losslessPlants
        settings.maxPlants = error.maxPlants
        for kind in StoreKind.bothStores {
            try await withEngine(kind, settings: settings) { engine in
                for (index, plant) in error.plants.enumerated() {
                    let name = String(plant.prefix { $0 != "," })
                    let added = try await Self.ask(
                        engine, PlantErrorCase.request("setup-\(index)", "REQ_addNewPlant", plant), topics)
                    #expect(
                        added.replies == [
                            Wire.reply("setup-\(index)", to: PlantErrorCase.sender, "RES_addNewPlant", payload: name)
                        ],
                        "\(kind)")
                }
                let answer = try await Self.ask(engine, error.message, topics)
                #expect(
                    answer.replies == [
                        Wire.error(error.id, to: PlantErrorCase.sender, error.tag, offending: error.message)
                    ], "\(kind)")
                #expect(answer.deadLetters.count == 1, "\(kind)")
                #expect(answer.deadLetters.first?.reason == error.tag)
                #expect(answer.deadLetters.first?.topic == topics.request(for: PlantErrorCase.sender))
                #expect(answer.deadLetters.first?.payload == error.message)
            }
        }
    }

    @Test("an error keeps the request's ID and echoes the request losslessly", arguments: PlantTopics.allCases)
    func errorEchoesEscapes(_ topics: PlantTopics) async throws {
        for kind in StoreKind.bothStores {
            try await withEngine(kind, settings: .losslessPlants) { engine in
                let message = PlantErrorCase.request(
                    "A-17", "REQ_addNewPlant", "Fern%3B%3A%25 way too long a name,0x36")
                let answer = try await Self.ask(engine, message, topics)
                #expect(
                    answer.replies == [
                        #"ID:A-17;sender:Host-RPI3B+;receiver:Bob's iPhone;payload:ID%3AA-17%3Bsender%3ABob's iPhone%3Breceiver%3AHost-RPI3B+%3Bpayload%3AFern%253B%253A%2525 way too long a name,0x36%3Boperation%3AREQ_addNewPlant;operation:ERR_plantNameTooLong"#
                    ], "\(kind)")
            }
        }
    }
}
