import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisMQTTTypes
import TrellisStore
import TrellisRelay
import TrellisTestSupport

@Suite("Catalog: care alerts through a real broker", .serialized)
struct CatalogCareAlertFlowTests {
    static let alertTopic = "trellis/alerts/Fern"

    /// Adds `Fern` on sensor 0x36 through the plant tracker protocol and links it to a High-use species.
    static func linkedFern(_ relay: RelayHarness) async throws -> (MQTTClient, MessageCollector) {
        let (client, inbox) = try await relay.connectCollecting("rpi/fromrpi", "trellis/alerts/#")
        try await addPlant("Fern", sensors: ["0x36"], as: "Bob", from: client, answeredIn: inbox)
        let store = try relay.store
        try await store.upsertSpecies([
            Species(
                symbol: "NEEX", scientificName: "Nephrolepis exaltata", commonName: "Boston swordfern",
                moistureUse: .high, shadeTolerance: .tolerant, minTempF: 28)
        ])
        #expect(try await store.linkPlant(plant: "Fern", symbol: "NEEX", at: Date()) == .linked)
        return (client, inbox)
    }

    static func reading(_ client: MQTTClient, moisture: Int, temperature: Double = 70) async throws {
        try await client.publishAndWait(
            topic: "rpi/sensors/0x36",
            payload: Array(#"{"moisture":\#(moisture),"temperature":\#(temperature)}"#.utf8))
    }

    static func json(_ message: MQTTMessage) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any])
    }

    @Test("moisture 1 for a High-use species → dry, then 7 → cleared; each published once, retained")
    func dryThenCleared() async throws {
        try await withRelay(settings: .losslessPlants) { relay in
            let (client, inbox) = try await Self.linkedFern(relay)
            try await Self.reading(client, moisture: 1)
            try await Self.reading(client, moisture: 2)
            try await Self.reading(client, moisture: 1)
            let dry = try await inbox.messages(on: Self.alertTopic)[0]
            #expect(dry.retain == false) // a live subscriber sees it as a new message
            let body = try Self.json(dry)
            #expect(
                body["plant"] as? String == "Fern" && body["symbol"] as? String == "NEEX"
                    && body["ok"] as? Bool == false)
            let alerts = try #require(body["alerts"] as? [[String: Any]])
            #expect(alerts.count == 1)
            #expect(alerts.first?["kind"] as? String == "dry" && alerts.first?["sensor"] as? String == "0x36")
            #expect(alerts.first?["value"] as? Double == 1 && alerts.first?["limit"] as? Double == 5)
            #expect((alerts.first?["since"] as? String).flatMap(ISO8601Time.parse) != nil)

            try await Self.reading(client, moisture: 7)
            try await Self.reading(client, moisture: 8)
            let both = try await inbox.messages(on: Self.alertTopic, count: 2)
            #expect(try Self.json(both[1])["ok"] as? Bool == true)
            #expect((try Self.json(both[1])["alerts"] as? [Any])?.isEmpty == true)
            // A marker: one more change (cold) proves no other alert message came in between.
            try await Self.reading(client, moisture: 7, temperature: 20)
            let all = try await inbox.messages(on: Self.alertTopic, count: 3)
            #expect(((try Self.json(all[2])["alerts"] as? [[String: Any]])?.first?["kind"] as? String) == "cold")
            #expect(await inbox.received(on: Self.alertTopic).count == 3)

            // Retained: a new subscriber gets the latest state.
            let (_, lateInbox) = try await relay.connectCollecting(Self.alertTopic)
            let retained = try await lateInbox.messages(on: Self.alertTopic)[0]
            #expect(retained.retain && retained.payload == all[2].payload)
        }
    }

    @Test("alert state and links survive a restart: no duplicate publication for the same state")
    func survivesRestart() async throws {
        try await withRelay(settings: .losslessPlants) { relay in
            let (client, inbox) = try await Self.linkedFern(relay)
            try await Self.reading(client, moisture: 1)
            try await inbox.messages(on: Self.alertTopic)
            try await relay.stopRelay()
            try await relay.startRelay()
            #expect(try await relay.store.linkedPlant(plant: "Fern")?.species.symbol == "NEEX")
            try await Self.reading(client, moisture: 2)
            try await Self.reading(client, moisture: 7)
            let messages = try await inbox.messages(on: Self.alertTopic, count: 2)
            #expect(try Self.json(messages[1])["ok"] as? Bool == true)
            #expect(await inbox.received(on: Self.alertTopic).count == 2)
        }
    }
}

/// The care alerts' logic on the relay's engine, over SQLite and PostgreSQL: what is published for
/// each message is what the engine returns for it.
@Suite("Catalog: care alerts on the engine, over every store")
struct CatalogCareAlertEngineTests {
    static let alertTopic = "trellis/alerts/Fern"

    /// An engine over a fresh store of `kind` with `Fern` on sensor 0x36 linked to a High-use species.
    static func withLinkedFern(_ kind: StoreKind, _ body: (EnginePhone) async throws -> Void) async throws {
        try await withPhone(kind, name: "Bob") { phone in
            _ = try await phone.ask(phone.request("1", "REQ_addNewPlant", payload: "Fern,0x36"))
            try await phone.harness.store.upsertSpecies([
                Species(
                    symbol: "NEEX", scientificName: "Nephrolepis exaltata", commonName: "Boston swordfern",
                    moistureUse: .high, shadeTolerance: .tolerant, minTempF: 28)
            ])
            #expect(try await phone.harness.store.linkPlant(plant: "Fern", symbol: "NEEX", at: Date()) == .linked)
            try await body(phone)
        }
    }

    static func json(_ message: MQTTMessage) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any])
    }

    @Test(
        "REQ_editPlant moves the link and the alerts: the old retained topic is cleared, the new one holds the state",
        arguments: StoreKind.bothStores)
    func renameMovesAlerts(_ kind: StoreKind) async throws {
        try await Self.withLinkedFern(kind) { phone in
            let reading = try await phone.send(#"{"moisture":1,"temperature":70}"#, on: "rpi/sensors/0x36")
            let dry = try #require(reading.first { $0.topic == Self.alertTopic })
            #expect(dry.retain, "an alert is retained")
            let renamed = try await phone.send(phone.request("ren", "REQ_editPlant", payload: "Fern,Sword Fern"))
            let moved = try #require(renamed.first { $0.topic == "trellis/alerts/Sword Fern" })
            let body = try Self.json(moved)
            #expect(
                body["plant"] as? String == "Sword Fern" && body["symbol"] as? String == "NEEX"
                    && body["ok"] as? Bool == false)
            // The alert kept its start: it is the same alert, under the new name.
            let since = { (message: MQTTMessage) in
                ((try? Self.json(message))?["alerts"] as? [[String: Any]])?.first?["since"] as? String
            }
            #expect(since(moved) != nil && since(moved) == since(dry))
            let cleared = try #require(renamed.first { $0.topic == Self.alertTopic })
            #expect(cleared.payload.isEmpty && cleared.retain)
            #expect(try await phone.harness.store.linkedPlant(plant: "Sword Fern")?.species.symbol == "NEEX")
        }
    }

    @Test(
        "the starter catalog is imported when the relay first handles a catalog message",
        arguments: StoreKind.bothStores)
    func starterImported(_ kind: StoreKind) async throws {
        try await withPhone(kind) { phone in
            #expect(try await phone.harness.store.speciesCount() == 0)
            try await phone.send(#"{"moisture":5,"temperature":60}"#, on: "rpi/sensors/0x40")
            #expect(try await phone.harness.store.speciesCount() == StarterCatalog.species.count)
        }
    }
}
