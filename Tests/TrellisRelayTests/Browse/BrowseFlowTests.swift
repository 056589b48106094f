import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// A state with a plant and its sensors, a reading, a linked species, a pressed button with a
/// registered client, a device and a model, built through the relay's own topics on the engine.
struct BrowseWorld {
    var console: EngineRecorder
    let species: Species

    static func build(_ console: EngineRecorder) async throws -> BrowseWorld {
        try await TestCatalog.load(console.store)
        await console.addPlant("Fern", sensors: ["0x36", "0x37"], as: "ann")
        await console.send(#"{"moisture":4,"temperature":70}"#, on: "rpi/sensors/0x36")
        await console.register("ann", for: "door")
        for _ in 0..<2 { await console.send("", on: "p2o/buttons/door/press") }
        #expect(console.messages(on: "p2o/clients/ann/button-press").count == 2)
        await console.online("node1")
        _ = try await console.data("models", "create", #"{"name":"sensor-node"}"#)
        _ = try await console.data("models", "assign", #"{"device":"node1","model":"m1"}"#)
        let species = try #require(TestCatalog.species.first)
        _ = try await console.data("plants", "link", #"{"plant":"Fern","symbol":"\#(species.symbol)"}"#)
        return BrowseWorld(console: console, species: species)
    }

    /// The `data` of a browse reply.
    func browse(_ json: String) async throws -> [String: Any] {
        try await console.object("browse", "", json)
    }

    /// The rows of a reply keyed by PERM_ID, each as column → cell.
    static func rows(_ data: [String: Any]) throws -> [String: [String: String]] {
        let columns = try #require(data["columns"] as? [String])
        let rows = try #require(data["rows"] as? [[String]])
        var byID: [String: [String: String]] = [:]
        for row in rows {
            #expect(row.count == columns.count)
            byID[row[0]] = Dictionary(uniqueKeysWithValues: zip(columns, row))
        }
        return byID
    }

    static func entities(_ permIDs: [String], refcons: [String: String]) -> String {
        let items = permIDs.map { id in
            ["PERM_ID": id, "REFCON": refcons[id] ?? ""]
        }
        return String(
            decoding: try! JSONSerialization.data(withJSONObject: items, options: [.sortedKeys]), as: UTF8.self)
    }
}

/// The browse service on the engine over SQLite and PostgreSQL.
@Suite("Browse: ROOT, DRILL and DETAIL")
struct BrowseFlowTests {
    @Test(
        "ROOT lists every kind with its category; DRILL gives children and grandchildren; DETAIL every column",
        arguments: StoreKind.bothStores)
    func rootDrillDetail(kind: StoreKind) async throws {
        try await withRecorder(kind, settings: .losslessPlants) { relay async throws in
            let world = try await BrowseWorld.build(relay)
            let root = try await world.browse(#"{"requestKey":"ROOT","transaction":"t1"}"#)
            #expect(root["columns"] as? [String] == BrowseTable.navigationColumns)
            #expect(root["total"] as? Int == 5)
            let rows = try BrowseWorld.rows(root)
            #expect(
                rows.mapValues { $0["CATEGORY"] ?? "" } == [
                    "plant:1": "Plants", "button:door": "Buttons", "client:ann": "Clients",
                    "device:node1": "Devices", "model:m1": "Models"
                ])
            #expect(rows["plant:1"]?["SUMMARY_HEADER"] == "Fern")
            #expect(
                rows["plant:1"]?["CHILDREN"] == #"["sensor:0x36","sensor:0x37","species:\#(world.species.symbol)"]"#)
            #expect(rows["button:door"]?["CHILDREN"] == #"["client:ann"]"#)
            #expect(rows["model:m1"]?["CHILDREN"] == #"["device:node1"]"#)
            let refcons = rows.mapValues { $0["REFCON"] ?? "" }

            let drill = try await world.browse(
                #"{"requestKey":"DRILL","entities":\#(BrowseWorld.entities(["plant:1", "model:m1", "button:door"], refcons: refcons))}"#
            )
            let drilled = try BrowseWorld.rows(drill)
            #expect(
                Set(drilled.keys) == [
                    "sensor:0x36", "sensor:0x37", "species:\(world.species.symbol)", "device:node1", "client:ann"
                ])
            #expect(
                drilled["sensor:0x36"]?["CATEGORY"] == ""
                    && drilled["sensor:0x36"]?["SUMMARY"]?.contains("moisture 4") == true)
            #expect(drilled["sensor:0x37"]?["SUMMARY"] == "no reading yet")
            #expect((drill["missing"] as? [Any])?.isEmpty == true)

            let named = BrowseWorld.entities(
                ["plant:1", "sensor:0x36", "species:" + world.species.symbol], refcons: refcons)
            let detail = try await world.browse(#"{"requestKey":"DETAIL","entities":\#(named)}"#)
            #expect(detail["columns"] as? [String] == BrowseTable.detailColumns)
            let details = try BrowseWorld.rows(detail)
            let plant = try #require(details["plant:1"])
            #expect(plant["IDENTIFIER"] == "Fern")
            let properties = try #require(
                try JSONSerialization.jsonObject(with: Data((plant["PROPERTIES"] ?? "").utf8)) as? [[String: String]])
            #expect(properties.map { $0["key"] ?? "" } == BrowsePresenter.properties[.plant]?.map(\.key))
            let values = Dictionary(uniqueKeysWithValues: properties.map { ($0["key"] ?? "", $0["value"] ?? "") })
            #expect(
                values["sensors"] == "0x36, 0x37" && values["species"] == world.species.symbol
                    && values["alerts"] == "none")
            #expect(
                details["sensor:0x36"]?["PROPERTIES"]?.contains(
                    #""key":"moisture","label":"Moisture (1–10)","value":"4""#) == true)
            #expect(details["species:\(world.species.symbol)"]?["SUMMARY_HEADER"] == world.species.commonName)
        }
    }

    @Test(
        "PERM_IDs stay over a restart and a device rename; forged REFCONs and unknown PERM_IDs are missing",
        arguments: StoreKind.bothStores)
    func stableAndMissing(kind: StoreKind) async throws {
        try await withRestarts(kind, settings: .losslessPlants) { relay, restart async throws in
            var world = try await BrowseWorld.build(relay)
            let before = try BrowseWorld.rows(try await world.browse(#"{"requestKey":"ROOT"}"#))
            _ = try await world.console.data("devices", "update", #"{"id":"node1","name":"Greenhouse"}"#)
            world.console = try await restart()
            let after = try BrowseWorld.rows(try await world.browse(#"{"requestKey":"ROOT"}"#))
            #expect(Set(after.keys) == Set(before.keys))
            #expect(after.mapValues { $0["REFCON"] } == before.mapValues { $0["REFCON"] })
            #expect(after["device:node1"]?["SUMMARY_HEADER"] == "Greenhouse")

            let forged = before["client:ann"]?["REFCON"] ?? ""
            let request = BrowseWorld.entities(
                ["plant:1", "plant:999", "nonsense", "device:node1"],
                refcons: ["plant:1": forged, "device:node1": before["device:node1"]?["REFCON"] ?? ""])
            let detail = try await world.browse(#"{"requestKey":"DETAIL","entities":\#(request)}"#)
            #expect(Set(try BrowseWorld.rows(detail).keys) == ["device:node1"])
            let missing = try #require(detail["missing"] as? [[String: String]])
            #expect(missing.map { $0["PERM_ID"] ?? "" } == ["plant:1", "nonsense", "plant:999"])
            #expect(missing.allSatisfy { !($0["reason"] ?? "").isEmpty })
            #expect(try await world.console.errorCode("browse", "", #"{"requestKey":"LIST"}"#) == "invalid_request")
        }
    }

    @Test("paging through ROOT covers every root entity exactly once", arguments: StoreKind.bothStores)
    func paging(kind: StoreKind) async throws {
        try await withRecorder(kind, settings: .losslessPlants) { console async throws in
            for index in 0..<23 { await console.send("", on: "p2o/buttons/b\(index)/press") }
            await console.send(client: "zed", "status", "online")
            var seen: [String] = []
            var total = 0
            try await console.store.flush()
            for page in 0..<10 {
                let data = try await console.object(
                    "browse", "", #"{"requestKey":"ROOT","offset":\#(page * 5),"limit":5}"#)
                total = data["total"] as? Int ?? -1
                let rows = try #require(data["rows"] as? [[String]])
                seen += rows.map { $0[0] }
                if rows.count < 5 { break }
            }
            #expect(total == 24)
            #expect(seen.count == 24 && Set(seen).count == 24)
            #expect(seen.last == "client:zed")
        }
    }
}
