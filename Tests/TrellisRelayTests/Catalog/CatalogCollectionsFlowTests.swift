import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// Likes, boards and plant links on the engine over SQLite and PostgreSQL, restarts included.
@Suite("Catalog: likes, boards and plant links")
struct CatalogCollectionsFlowTests {
    @Test(
        "likes: add, a second like is a conflict, list newest first, remove; shared form refused; kept over a restart",
        arguments: StoreKind.bothStores)
    func likes(kind: StoreKind) async throws {
        try await withRestarts(kind, settings: .losslessPlants) { started, restart async throws in
            try await TestCatalog.load(started.store)
            var console = started
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

            console = try await restart()
            #expect(
                try await console.object("likes", "remove", #"{"symbol":"TS2"}"#, client: "ann")["unliked"] as? String
                    == "TS2")
            #expect(try await console.errorCode("likes", "remove", #"{"symbol":"TS2"}"#, client: "ann") == "not_found")
            let after = try await console.object("likes", "list", "", client: "ann")
            #expect((after["likes"] as? [[String: Any]])?.compactMap { $0["symbol"] as? String } == ["TS1"])
        }
    }

    @Test(
        "boards: create, conflict, rename, add several with one present, remove, public and private, delete, restart",
        arguments: StoreKind.bothStores)
    func boards(kind: StoreKind) async throws {
        try await withRestarts(kind, settings: .losslessPlants) { started, restart async throws in
            try await TestCatalog.load(started.store)
            var console = started
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

            console = try await restart()
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
        "plants/link: a linked plant reporting moisture 1 for a High-use species is dry, 7 clears it; unlink clears the topic",
        arguments: StoreKind.bothStores)
    func linkAlerts(kind: StoreKind) async throws {
        try await withRecorder(kind, settings: .losslessPlants) { console async throws in
            try await TestCatalog.load(console.store)
            await console.addPlant("Fern", sensors: ["0x36"], as: "Bob")
            let high = try #require(TestCatalog.species.first { $0.moistureUse == .high && $0.minTempF < 0 })

            #expect(
                try await console.errorCode("plants", "link", #"{"plant":"Oak","symbol":"\#(high.symbol)"}"#)
                    == "not_found")
            #expect(try await console.errorCode("plants", "link", #"{"plant":"Fern","symbol":"NOPE"}"#) == "not_found")
            let linked = try await console.object(
                "plants", "link", #"{"plant":"Fern","symbol":"\#(high.symbol)"}"#, client: "bob")
            #expect(linked["plant"] as? String == "Fern" && linked["symbol"] as? String == high.symbol)

            for moisture in [1, 2, 7, 8] {
                await console.send(#"{"moisture":\#(moisture),"temperature":70}"#, on: "rpi/sensors/0x36")
            }
            let alerts = console.messages(on: "trellis/alerts/Fern")
            #expect(alerts.count == 2)
            try #require(alerts.count >= 2)
            #expect(
                alerts[0].text?.contains(#""kind":"dry""#) == true && alerts[0].text?.contains(#""ok":false"#) == true)
            #expect(alerts[1].text?.contains(#""ok":true"#) == true)

            #expect(try await console.object("plants", "unlink", #"{"plant":"Fern"}"#)["unlinked"] as? String == "Fern")
            let cleared = console.messages(on: "trellis/alerts/Fern")
            #expect(cleared.count == 3 && cleared.last?.payload.isEmpty == true && cleared.last?.retain == true)
            #expect(try await console.errorCode("plants", "unlink", #"{"plant":"Fern"}"#) == "not_found")
            #expect(console.messages(on: "trellis/alerts/Fern").count == 3)
        }
    }
}
