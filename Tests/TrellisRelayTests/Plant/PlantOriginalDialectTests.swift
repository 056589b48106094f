import Foundation
import Testing
import TrellisMQTTTypes
import TrellisRelay
import TrellisTestSupport

/// The shared topics in their default dialect, the released app's, message by message on the wire;
/// the per-client topics and Response Topics in the lossless one beside it. On the relay's engine,
/// over SQLite and PostgreSQL: every reply a message causes is what the engine publishes for it.
@Suite("Plant tracker: the original dialect on the shared topics, on the engine, over every store")
struct PlantOriginalDialectTests {
    @Test("the app's requests, answered as the original host answered them", arguments: StoreKind.bothStores)
    func wireExchange(_ kind: StoreKind) async throws {
        var settings = RelaySettings()
        settings.spamLimit = 1000
        try await withPhone(kind, settings: settings, name: "3F2A", topics: .shared) { phone async throws in
            let request = { (operation: String, payload: String) in phone.request("0", operation, payload: payload) }
            /// Everything `text` caused on rpi/fromrpi.
            func answers(_ text: String, count: Int) async throws -> [String] {
                let caused = try await phone.replies(to: text, on: "rpi/fromrpi")
                #expect(caused.count == count, "\(caused)")
                return caused
            }
            #expect(try await answers(request("REQ_addNewPlant", #"Fern--["0x36"]"#), count: 0) == [])
            #expect(try await answers(request("REQ_addNewPlant", #"Basil--["37", "0x38"]"#), count: 0) == [])
            #expect(
                try await answers(request("REQ_numPlants", ""), count: 1) == [
                    Wire.reply("0", to: "3F2A", "RES_numPlants", payload: "2")
                ])
            #expect(
                try await answers(request("REQ_plantInfoOnStartup", "1"), count: 1) == [
                    Wire.reply(
                        "0", to: "3F2A", "RES_plantInfoOnStartup",
                        payload: #"{"Name"-- "Basil", "Sensors"-- "[\"0x37\", \"0x38\"]"}"#)
                ])
            #expect(
                try await answers(request("REQ_plantInfoOnStartup", "2"), count: 1) == [
                    Wire.reply(
                        "0", to: "3F2A", "ERR_noPlantDataToRequest",
                        payload: "ID--0|sender--3F2A|receiver--Host-RPI3B+|payload--2|operation--REQ_plantInfoOnStartup"
                    )
                ])

            try await phone.send(#"{"moisture": 4, "temperature": 68.5}"#, on: "rpi/sensors/0x37")
            #expect(
                try await answers(request("REQ_plantSensorData", "all"), count: 1) == [
                    Wire.reply(
                        "0", to: "3F2A", "RES_plantSensorData",
                        payload: "{'moisture'-- 4, 'temperature'-- 69, 'plant'-- 'Basil', 'sensor'-- '0x37'}")
                ])

            #expect(try await answers(request("REQ_editPlant", "Basil,Thai Basil"), count: 0) == [])
            #expect(
                try await answers(request("REQ_editPlant", "Fern,Thai Basil"), count: 1) == [
                    Wire.reply(
                        "0", to: "3F2A", "ERR_plantNameTaken",
                        payload:
                            "ID--0|sender--3F2A|receiver--Host-RPI3B+|payload--Fern,Thai Basil|operation--REQ_editPlant"
                    )
                ])
            #expect(
                try await answers(request("REQ_editPlant", "Rose,Tulip"), count: 1).first?.hasSuffix(
                    "operation:ERR_cannotDeletePlant") == true)
            #expect(try await answers(request("REQ_editPlant", "Fern,Fern"), count: 0) == [])
            #expect(try await answers(request("REQ_deletePlant", "Fern"), count: 0) == [])
            #expect(
                try await answers(request("REQ_plantInfoOnStartup", "0"), count: 1) == [
                    Wire.reply(
                        "0", to: "3F2A", "RES_plantInfoOnStartup",
                        payload: #"{"Name"-- "Thai Basil", "Sensors"-- "[\"0x37\", \"0x38\"]"}"#)
                ])
            // A malformed message is answered with the host's escape and ID 0.
            #expect(
                try await answers(
                    "ID:9;sender:3F2A;receiver:Host-RPI3B+;payload:12:30;operation:REQ_numPlants", count: 1) == [
                        Wire.reply(
                            "0", to: "3F2A", "ERR_missingKeys",
                            payload: "ID--9|sender--3F2A|receiver--Host-RPI3B+|payload--12--30|operation--REQ_numPlants"
                        )
                    ])
        }
    }

    @Test(
        "a Response Topic on the shared topic gets the lossless answer, also where rpi/fromrpi gets none (a broker without accounts)",
        arguments: StoreKind.bothStores)
    func responseTopicIsLossless(_ kind: StoreKind) async throws {
        try await withPhone(kind, settings: RelaySettings().openResponseTopics, name: "Bob", topics: .shared) {
            phone async throws in
            let properties = MQTTProperties(responseTopic: "replies/bob", correlationData: Array("c1".utf8))
            let added = try await phone.send(
                phone.request("7", "REQ_addNewPlant", payload: "Fern,0x36"), properties: properties)
            let counted = try await phone.send(phone.request("8", "REQ_numPlants"), properties: properties)
            let published = added + counted
            #expect(
                published.filter { $0.topic == "replies/bob" }.map { String(decoding: $0.payload, as: UTF8.self) } == [
                    Wire.reply("7", to: "Bob", "RES_addNewPlant", payload: "Fern"),
                    Wire.reply("8", to: "Bob", "RES_numPlants", payload: "1")
                ])
            #expect(
                published.filter { $0.topic == "replies/bob" }.allSatisfy {
                    $0.properties.correlationData == Array("c1".utf8)
                })
            #expect(
                published.filter { $0.topic == "rpi/fromrpi" }.map { String(decoding: $0.payload, as: UTF8.self) } == [
                    Wire.reply("0", to: "Bob", "RES_numPlants", payload: "1")
                ])
        }
    }

    @Test(
        "REQ_editPlant in the lossless dialect answers RES_editPlant with the new name", arguments: StoreKind.bothStores
    )
    func losslessRename(_ kind: StoreKind) async throws {
        try await withPhone(kind, settings: RelaySettings(), name: "Bob", topics: .perClient) { phone async throws in
            #expect(
                try await phone.ask(phone.request("1", "REQ_addNewPlant", payload: "Fern,0x36"))
                    == Wire.reply("1", to: "Bob", "RES_addNewPlant", payload: "Fern"))
            #expect(
                try await phone.ask(phone.request("2", "REQ_editPlant", payload: "Fern,a%3Bb"))
                    == Wire.reply("2", to: "Bob", "RES_editPlant", payload: "a%3Bb"))
            #expect(
                try await phone.ask(phone.request("3", "REQ_plantInfoOnStartup"))
                    == Wire.reply(
                        "3", to: "Bob", "RES_plantInfoOnStartup",
                        payload: #"{"count"%3A1,"plants"%3A[{"name"%3A"a%3Bb","sensors"%3A["0x36"]}]}"#))
            #expect(
                try await phone.ask(phone.request("4", "REQ_editPlant", payload: "Fern,Mint")).hasSuffix(
                    "operation:ERR_cannotDeletePlant"))
            #expect(
                try await phone.ask(phone.request("5", "REQ_editPlant", payload: "a%3Bb,Boston Sword Fern")).hasSuffix(
                    "operation:ERR_plantNameTooLong"))
        }
    }

    @Test(
        "in the original dialect a request with an empty sender is dead-lettered: its answer would carry an empty receiver",
        arguments: StoreKind.bothStores)
    func emptySender(_ kind: StoreKind) async throws {
        try await withPhone(kind, settings: RelaySettings(), name: "Bob", topics: .shared) { phone async throws in
            try await phone.send("ID:0;sender:;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants")
            let letters = try phone.deadLetters()
            #expect(letters.map(\.reason) == ["empty_sender"])
            try await phone.sendMarker("0")
            #expect(phone.allReplies().count == 1)
        }
    }

    @Test(
        "a refresh's index reads are free, but only as many as the count answered: a flood of them is still kicked",
        arguments: StoreKind.bothStores)
    func indexReadsAreBounded(_ kind: StoreKind) async throws {
        var settings = RelaySettings()
        settings.spamLimit = 3
        settings.spamWindow = 600
        try await withPhone(kind, settings: settings, name: "Eve", topics: .shared) { phone async throws in
            for name in ["A", "B"] {
                try await phone.send(phone.request("0", "REQ_addNewPlant", payload: "\(name),0x36"))
            }
            try await phone.send(phone.request("0", "REQ_numPlants"))
            for index in 0..<4 {
                try await phone.send(phone.request("0", "REQ_plantInfoOnStartup", payload: String(index % 2)))
            }
            let replies = phone.allReplies()
            // 2 adds and the count use up the limit of 3; the two reads are free; the third is kicked.
            #expect(
                replies.map { $0.components(separatedBy: "operation:").last ?? "" } == [
                    "RES_numPlants", "RES_plantInfoOnStartup", "RES_plantInfoOnStartup", "ERR_kickedForSpam"
                ])
        }
    }
}
