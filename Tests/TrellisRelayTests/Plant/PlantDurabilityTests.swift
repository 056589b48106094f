import Foundation
import Testing
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// The plant tracker's state across a restart, and large payloads, on the engine over SQLite and
/// PostgreSQL; a reading sent while Trellis is down, which the broker keeps for it, in
/// ``PlantDurabilityBrokerTests``.
@Suite("Plant tracker state across restarts, and large payloads")
struct PlantDurabilityTests {
    @Test("plants and readings survive a restart of Trellis", arguments: PlantTopics.onEveryStore)
    func survivesRestart(_ topics: PlantTopics, _ kind: StoreKind) async throws {
        try await withRestarts(kind, settings: .losslessPlants) { started, restart async throws in
            var phone = EnginePhone(started.harness, topics: topics)
            #expect(
                try await phone.ask(phone.request("1", "REQ_addNewPlant", payload: "Fern,0x36,0x37"))
                    == Wire.reply("1", to: phone.name, "RES_addNewPlant", payload: "Fern"))
            #expect(
                try await phone.ask(phone.request("2", "REQ_addNewPlant", payload: "Basil,0x38"))
                    == Wire.reply("2", to: phone.name, "RES_addNewPlant", payload: "Basil"))
            try await phone.send(
                #"{"moisture":4,"temperature":68.5,"at":"2026-05-01T10:00:00Z"}"#, on: "rpi/sensors/0x37")
            #expect(
                try await phone.ask(phone.request("3", "REQ_deletePlant", payload: "Basil"))
                    == Wire.reply("3", to: phone.name, "RES_deletePlant", payload: "Basil"))

            phone = EnginePhone(try await restart().harness, topics: topics)

            #expect(
                try await phone.ask(phone.request("4", "REQ_numPlants"))
                    == Wire.reply("4", to: phone.name, "RES_numPlants", payload: "1"))
            #expect(
                try await phone.ask(phone.request("5", "REQ_plantInfoOnStartup"))
                    == Wire.reply(
                        "5", to: phone.name,
                        "RES_plantInfoOnStartup",
                        payload: Wire.escape(#"{"count":1,"plants":[{"name":"Fern","sensors":["0x36","0x37"]}]}"#)))
            #expect(
                try await phone.sensorData(id: "6", of: "all")
                    == phone.sensorDataReply(
                        id: "6",
                        """
                        [{"at":null,"moisture":null,"plant":"Fern","sensor":"0x36","temperature":null},\
                        {"at":"2026-05-01T10:00:00.000Z","moisture":4,"plant":"Fern","sensor":"0x37","temperature":68.5}]
                        """))
            // The name is still taken after the restart.
            let again = phone.request("7", "REQ_addNewPlant", payload: "Fern,0x39")
            #expect(
                try await phone.ask(again) == Wire.error("7", to: phone.name, "ERR_plantNameTaken", offending: again))
        }
    }

    @Test(
        "a 100 KiB request is answered in full and dead-lettered truncated to 64 KiB",
        arguments: PlantTopics.onEveryStore)
    func largePayload(_ topics: PlantTopics, _ kind: StoreKind) async throws {
        try await withPhone(kind, topics: topics) { phone in
            // 100 KiB of name with escapes and non-ASCII text in it: far too long a plant name.
            let chunk = "Fern%3A;é-"
            let name = String(repeating: chunk, count: 100 * 1024 / chunk.utf8.count + 1)
            let message = phone.request("big", "REQ_addNewPlant", payload: Wire.escape(name) + ",0x36")
            #expect(message.utf8.count > 100 * 1024)

            let reply = try await phone.ask(message)
            #expect(reply == Wire.error("big", to: phone.name, "ERR_plantNameTooLong", offending: message))

            let letters = try phone.deadLetters()
            #expect(letters.count == 1)
            #expect(letters.first?.reason == "ERR_plantNameTooLong")
            #expect(letters.first?.truncated == true)
            #expect(letters.first?.size == message.utf8.count)
            let kept = try #require(letters.first?.payload)
            #expect(kept.utf8.count <= 64 * 1024)
            #expect(message.hasPrefix(kept))
        }
    }

    @Test(
        "a 100 KiB request for an unknown plant comes back whole, escaped twice", arguments: PlantTopics.onEveryStore)
    func largeUnknownPlant(_ topics: PlantTopics, _ kind: StoreKind) async throws {
        try await withPhone(kind, topics: topics) { phone in
            #expect(
                try await phone.ask(phone.request("1", "REQ_addNewPlant", payload: "Fern,0x36")).hasSuffix(
                    "RES_addNewPlant"))
            let unknown = String(repeating: "x:y;", count: 25 * 1024)
            let message = phone.request("2", "REQ_plantSensorData", payload: Wire.escape(unknown))
            let reply = try await phone.ask(message)
            #expect(reply == Wire.error("2", to: phone.name, "ERR_noPlantDataToRequest", offending: message))
            #expect(reply.utf8.count > 300_000)
        }
    }
}

/// A reading published while Trellis is down, kept by the broker for its session: only a broker shows it.
@Suite("Plant tracker: a reading while Trellis is down, through a real broker")
struct PlantDurabilityBrokerTests {
    @Test("a reading sent while Trellis is down is stored when it returns")
    func readingWhileDown() async throws {
        try await withRelay(settings: .losslessPlants) { relay in
            let phone = try await PlantClient.connect(relay, topics: .shared)
            #expect(
                try await phone.ask(phone.request("1", "REQ_addNewPlant", payload: "Fern,0x36"))
                    == Wire.reply("1", to: phone.name, "RES_addNewPlant", payload: "Fern"))
            try await relay.stopRelay()
            try await phone.send(
                #"{"moisture":8,"temperature":70,"at":"2026-05-01T10:00:00Z"}"#, on: "rpi/sensors/0x36")
            try await relay.startRelay()
            #expect(
                try await phone.sensorData(id: "2", of: "all")
                    == phone.sensorDataReply(
                        id: "2",
                        #"[{"at":"2026-05-01T10:00:00.000Z","moisture":8,"plant":"Fern","sensor":"0x36","temperature":70}]"#
                    ))
        }
    }
}
