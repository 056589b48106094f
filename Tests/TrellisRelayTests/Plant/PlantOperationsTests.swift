import Foundation
import Testing
import TrellisTestSupport

/// The plant tracker's operations on the relay's engine, over SQLite and PostgreSQL, on the shared
/// and the per-client topics: the protocol's logic needs no broker.
@Suite("Plant tracker operations on the engine, over every store")
struct PlantOperationsTests {
    @Test(
        "the original client's exact request gets one record per sensor, null while unreported",
        arguments: PlantTopics.onEveryStore)
    func originalClient(_ topics: PlantTopics, _ kind: StoreKind) async throws {
        try await withPhone(kind, topics: topics) { phone in
            let added = try await phone.ask(phone.request("1", "REQ_addNewPlant", payload: "Fern,0x36"))
            #expect(added == "ID:1;sender:Host-RPI3B+;receiver:Bob's iPhone;payload:Fern;operation:RES_addNewPlant")

            let data = try await phone.ask(
                "ID:0;sender:Bob's iPhone;receiver:Host-RPI3B+;payload:all;operation:REQ_plantSensorData")
            #expect(
                data
                    == #"ID:0;sender:Host-RPI3B+;receiver:Bob's iPhone;payload:[{"at"%3Anull,"moisture"%3Anull,"plant"%3A"Fern","sensor"%3A"0x36","temperature"%3Anull}];operation:RES_plantSensorData"#
            )
        }
    }

    @Test(
        "add, list, count, read, delete: every operation answered with its RES_ tag",
        arguments: PlantTopics.onEveryStore)
    func everyOperation(_ topics: PlantTopics, _ kind: StoreKind) async throws {
        try await withPhone(kind, topics: topics) { phone in
            func expectReply(
                _ id: String, _ operation: String, payload: String, _ answer: String,
                _ json: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
            ) async throws {
                let reply = try await phone.ask(phone.request(id, "REQ_\(operation)", payload: payload))
                #expect(
                    reply
                        == Wire.reply(
                            id, to: phone.name, "RES_\(operation)", payload: json ? Wire.escape(answer) : answer),
                    sourceLocation: sourceLocation)
            }

            try await expectReply("1", "numPlants", payload: "", "0")
            try await expectReply("2", "plantInfoOnStartup", payload: "", #"{"count":0,"plants":[]}"#)
            try await expectReply("3", "addNewPlant", payload: "Fern,0x36", "Fern")
            try await expectReply("4", "addNewPlant", payload: "Basil,0x37,0X38", "Basil")
            try await expectReply("5", "numPlants", payload: "", "2")

            let both =
                #"{"count":2,"plants":[{"name":"Fern","sensors":["0x36"]},{"name":"Basil","sensors":["0x37","0x38"]}]}"#
            try await expectReply("6", "plantInfoOnStartup", payload: "", both)
            try await expectReply("7", "plantInfoOnStartup", payload: "all", both)
            try await expectReply(
                "8", "plantInfoOnStartup", payload: "Basil",
                #"{"count":1,"plants":[{"name":"Basil","sensors":["0x37","0x38"]}]}"#)

            try await expectReply(
                "9", "plantSensorData", payload: "all",
                """
                [{"at":null,"moisture":null,"plant":"Fern","sensor":"0x36","temperature":null},\
                {"at":null,"moisture":null,"plant":"Basil","sensor":"0x37","temperature":null},\
                {"at":null,"moisture":null,"plant":"Basil","sensor":"0x38","temperature":null}]
                """)

            // A sensor node reports; the next request sees the reading (Trellis handles messages in order).
            try await phone.send(
                #"{"moisture": 7, "temperature": 71.5, "at": "2026-05-01T10:00:00Z"}"#, on: "rpi/sensors/0x36")
            try await expectReply(
                "10", "plantSensorData", payload: "Fern",
                #"[{"at":"2026-05-01T10:00:00.000Z","moisture":7,"plant":"Fern","sensor":"0x36","temperature":71.5}]"#)
            try await expectReply(
                "11", "plantSensorData", payload: "Basil",
                """
                [{"at":null,"moisture":null,"plant":"Basil","sensor":"0x37","temperature":null},\
                {"at":null,"moisture":null,"plant":"Basil","sensor":"0x38","temperature":null}]
                """)

            try await expectReply("12", "deletePlant", payload: "Fern", "Fern")
            try await expectReply("13", "numPlants", payload: "", "1")
            try await expectReply(
                "14", "plantInfoOnStartup", payload: "all",
                #"{"count":1,"plants":[{"name":"Basil","sensors":["0x37","0x38"]}]}"#)
            #expect(phone.allReplies().count == 14)
        }
    }

    @Test(
        "payloads are percent-decoded on the way in and encoded on the way out",
        arguments: [
            ("Fern,0x36", "Fern", "Fern"),
            ("  Fern  , 0X3a ,0x3A", "Fern", "Fern"),
            ("a%3Bb%3Ac%25,0x40", "a;b:c%", "a%3Bb%3Ac%25"),
            ("a%3bb%3ac,0x40", "a;b:c", "a%3Bb%3Ac"),
            ("100%,0x40", "100%", "100%25"),
            ("Caf%C3%A9 ñ,0x40", "Café ñ", "Café ñ"),
            ("Bob's fern,0x40", "Bob's fern", "Bob's fern"),
            ("ABCDEFGHIJKLMNO,0x40", "ABCDEFGHIJKLMNO", "ABCDEFGHIJKLMNO")
        ], StoreKind.bothStores)
    func percentEncoding(_ names: (payload: String, name: String, wireName: String), _ kind: StoreKind) async throws {
        let (payload, name, wireName) = names
        try await withPhone(kind) { phone in
            let added = try await phone.ask(phone.request("1", "REQ_addNewPlant", payload: payload))
            #expect(added == Wire.reply("1", to: phone.name, "RES_addNewPlant", payload: wireName))

            // The stored name is the decoded one: asking for it (encoded) finds it.
            let info = try await phone.ask(phone.request("2", "REQ_plantInfoOnStartup", payload: Wire.escape(name)))
            let sensors =
                payload.hasPrefix("  Fern") ? #"["0x3a"]"# : payload.hasPrefix("Fern") ? #"["0x36"]"# : #"["0x40"]"#
            let json = #"{"count":1,"plants":[{"name":"\#(name)","sensors":\#(sensors)}]}"#
            #expect(info == Wire.reply("2", to: phone.name, "RES_plantInfoOnStartup", payload: Wire.escape(json)))

            let deleted = try await phone.ask(phone.request("3", "REQ_deletePlant", payload: Wire.escape(name)))
            #expect(deleted == Wire.reply("3", to: phone.name, "RES_deletePlant", payload: wireName))
        }
    }

    @Test(
        "a key repeated among five distinct keys counts once; its last value wins", arguments: PlantTopics.onEveryStore)
    func repeatedKey(_ topics: PlantTopics, _ kind: StoreKind) async throws {
        try await withPhone(kind, topics: topics) { phone in
            let reply = try await phone.ask(
                "ID:1;sender:Bob's iPhone;receiver:Host-RPI3B+;payload:Rose,0x36;payload:Fern,0x37;operation:REQ_addNewPlant"
            )
            #expect(reply == "ID:1;sender:Host-RPI3B+;receiver:Bob's iPhone;payload:Fern;operation:RES_addNewPlant")
        }
    }

    @Test("a trailing ';' is accepted and a UUID client name is answered", arguments: PlantTopics.onEveryStore)
    func trailingSemicolon(_ topics: PlantTopics, _ kind: StoreKind) async throws {
        try await withPhone(kind, name: "7C1F0E2A-0B55-4F55-9E0C-1D2A3B4C5D6E", topics: topics) { phone in
            let reply = try await phone.ask(phone.request("uuid-1", "REQ_numPlants") + ";")
            #expect(
                reply
                    == "ID:uuid-1;sender:Host-RPI3B+;receiver:7C1F0E2A-0B55-4F55-9E0C-1D2A3B4C5D6E;payload:0;operation:RES_numPlants"
            )
        }
    }
}
