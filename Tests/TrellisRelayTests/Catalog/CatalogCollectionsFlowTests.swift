import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

@Suite("Catalog: likes, boards and plant links through a real broker")
struct CatalogCollectionsFlowTests {
    @Test(
        "likes: add, a second like is a conflict, list newest first, remove; shared form refused; kept over a restart")
    func likes() async throws {
        try await withRelay(settings: .losslessPlants) { relay in
            try await TestCatalog.load(relay)
            let console = try await FleetConsole.open(relay)
            #expect(
                try await console.object("likes", "add", #"{"symbol":"TS1"}"#, client: "ann")["liked"] as? String
                    == "TS1")
            _ = try await console.object("likes", "add", #"{"symbol":"TS2"}"#, client: "ann")
            #expect(try await console.errorCode("likes", "add", #"{"symbol":"TS1"}"#, client: "ann") == "conflict")
            #expect(try await console.errorCode("likes", "add", #"{"symbol":"XX9"}"#, client: "ann") == "not_found")
            #expect(try await console.errorCode("likes", "add", #"{"symbol":"TS1"}"#) == "invalid_request")
            let listed = try await console.object("likes", "list", "", client: "ann")
            #expect((listed["likes"] as? [[String: Any]])?.compactMap { $0["symbol"] as? String } == ["TS2", "TS1"])
            #expect((try await console.object("likes", "list", "", client: "ben")["likes"] as? [Any])?.isEmpty == true)

            try await relay.stopRelay()
            try await relay.startRelay()
            #expect(
                try await console.object("likes", "remove", #"{"symbol":"TS2"}"#, client: "ann")["unliked"] as? String
                    == "TS2")
            #expect(try await console.errorCode("likes", "remove", #"{"symbol":"TS2"}"#, client: "ann") == "not_found")
            let after = try await console.object("likes", "list", "", client: "ann")
            #expect((after["likes"] as? [[String: Any]])?.compactMap { $0["symbol"] as? String } == ["TS1"])
        }
    }

    @Test("boards: create, conflict, rename, add several with one present, remove, public and private, delete, restart")
    func boards() async throws {
        try await withRelay(settings: .losslessPlants) { relay in
            try await TestCatalog.load(relay)
            let console = try await FleetConsole.open(relay)
            let created = try await console.object(
                "boards", "create", #"{"name":"Shade","description":"north bed"}"#, client: "ann")
            let id = try #require(created["id"] as? Int)
            #expect(
                created["public"] as? Bool == false && created["count"] as? Int == 0
                    && created["owner"] as? String == "ann")
            #expect(try await console.errorCode("boards", "create", #"{"name":"Shade"}"#, client: "ann") == "conflict")
            #expect(
                try await console.errorCode(
                    "boards", "create", #"{"name":"\#(String(repeating: "x", count: 41))"}"#, client: "ann")
                    == "invalid_request")
            _ = try await console.object("boards", "create", #"{"name":"Shade"}"#, client: "ben")

            let renamed = try await console.object(
                "boards", "update", #"{"board":\#(id),"name":"Deep shade"}"#, client: "ann")
            #expect(renamed["name"] as? String == "Deep shade" && renamed["description"] as? String == "north bed")
            _ = try await console.object("boards", "add", #"{"board":\#(id),"symbols":["TS3"]}"#, client: "ann")
            let added = try await console.object(
                "boards", "add", #"{"board":\#(id),"symbols":["TS4","TS3","TS5"]}"#, client: "ann")
            #expect(added["added"] as? [String] == ["TS4", "TS5"] && added["already_present"] as? [String] == ["TS3"])
            #expect(
                try await console.errorCode(
                    "boards", "add", #"{"board":\#(id),"symbols":["TS6","NOPE"]}"#, client: "ann")
                    == "not_found")
            let removed = try await console.object(
                "boards", "remove", #"{"board":\#(id),"symbols":["TS4","TS9"]}"#, client: "ann")
            #expect(removed["removed"] as? [String] == ["TS4"] && removed["not_present"] as? [String] == ["TS9"])

            #expect(
                try await console.errorCode("boards", "get", #"{"board":\#(id),"owner":"ann"}"#, client: "ben")
                    == "not_found")
            _ = try await console.object("boards", "update", #"{"board":\#(id),"public":true}"#, client: "ann")
            let seen = try await console.object("boards", "get", #"{"board":\#(id),"owner":"ann"}"#, client: "ben")
            #expect((seen["species"] as? [[String: Any]])?.compactMap { $0["symbol"] as? String } == ["TS3", "TS5"])
            #expect(try await console.errorCode("boards", "delete", #"{"board":\#(id)}"#, client: "ben") == "not_found")

            try await relay.stopRelay()
            try await relay.startRelay()
            let listed = try await console.object("boards", "list", "", client: "ann")
            #expect(
                (listed["boards"] as? [[String: Any]])?.map { [$0["name"] as? String, "\($0["count"] ?? "")"] } == [
                    ["Deep shade", "2"]
                ])
            #expect(
                try await console.object("boards", "delete", #"{"board":\#(id)}"#, client: "ann")["deleted"] as? Int
                    == id)
            #expect(
                (try await console.object("boards", "list", "", client: "ann")["boards"] as? [Any])?.isEmpty == true)
            #expect(try await console.errorCode("boards", "list", "") == "invalid_request")
        }
    }

    @Test(
        "plants/link: a linked plant reporting moisture 1 for a High-use species is dry, 7 clears it; unlink clears the topic"
    )
    func linkAlerts() async throws {
        try await withRelay(settings: .losslessPlants) { relay in
            try await TestCatalog.load(relay)
            let console = try await FleetConsole.open(relay)
            let (tracker, inbox) = try await relay.connectCollecting("rpi/fromrpi", "trellis/alerts/#")
            try await addPlant("Fern", sensors: ["0x36"], as: "Bob", from: tracker, answeredIn: inbox)
            let high = try #require(TestCatalog.species.first { $0.moistureUse == .high && $0.minTempF < 0 })

            #expect(
                try await console.errorCode("plants", "link", #"{"plant":"Oak","symbol":"\#(high.symbol)"}"#)
                    == "not_found")
            #expect(try await console.errorCode("plants", "link", #"{"plant":"Fern","symbol":"NOPE"}"#) == "not_found")
            let linked = try await console.object(
                "plants", "link", #"{"plant":"Fern","symbol":"\#(high.symbol)"}"#, client: "bob")
            #expect(linked["plant"] as? String == "Fern" && linked["symbol"] as? String == high.symbol)

            for moisture in [1, 2, 7, 8] {
                try await tracker.publishAndWait(
                    topic: "rpi/sensors/0x36", payload: Array(#"{"moisture":\#(moisture),"temperature":70}"#.utf8))
            }
            let alerts = try await inbox.messages(on: "trellis/alerts/Fern", count: 2)
            #expect(
                alerts[0].text?.contains(#""kind":"dry""#) == true && alerts[0].text?.contains(#""ok":false"#) == true)
            #expect(alerts[1].text?.contains(#""ok":true"#) == true)

            #expect(try await console.object("plants", "unlink", #"{"plant":"Fern"}"#)["unlinked"] as? String == "Fern")
            let cleared = try await inbox.messages(on: "trellis/alerts/Fern", count: 3)
            #expect(cleared[2].payload.isEmpty)
            #expect(try await console.errorCode("plants", "unlink", #"{"plant":"Fern"}"#) == "not_found")
            #expect(await inbox.received(on: "trellis/alerts/Fern").count == 3)
        }
    }
}
