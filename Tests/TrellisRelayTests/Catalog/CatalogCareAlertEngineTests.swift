import Foundation
import Testing
import TrellisCore
import TrellisMQTT
import TrellisMQTTTypes
import TrellisStore
import TrellisRelay
import TrellisTestSupport

/// The care alerts' logic on the relay's engine, over SQLite and PostgreSQL: what is published for
/// each message is what the engine returns for it.
@Suite("Catalog: care alerts on the engine, over every store")
struct CatalogCareAlertEngineTests {
    static let alertTopic = "trellis/alerts/Fern"

    /// An engine over a fresh store of `kind` with `Fern` on sensor 0x36 linked to a High-use species.
    static func withLinkedFern(_ kind: StoreKind, _ body: (EnginePhone) async throws -> Void) async throws {
        try await withPhone(kind, name: "Bob") { phone in
            _ = try await phone.ask(phone.request("1", "REQ_addNewPlant", payload: "Fern,0x36"))
            try await phone.harness.store.upsertSpecies([neex])
            #expect(try await phone.harness.store.linkPlant(plant: "Fern", symbol: "NEEX", at: Date()) == .linked)
            try await body(phone)
        }
    }

    static func json(_ message: MQTTMessage) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any])
    }

    static let neex = Species(
        symbol: "NEEX", scientificName: "Nephrolepis exaltata", commonName: "Boston swordfern",
        moistureUse: .high, shadeTolerance: .tolerant, minTempF: 28)

    /// The alert messages a reading on sensor 0x36 publishes.
    static func reading(
        _ phone: EnginePhone, moisture: Int, temperature: Double = 70
    ) async throws -> [MQTTMessage] {
        try await phone.send(#"{"moisture":\#(moisture),"temperature":\#(temperature)}"#, on: "rpi/sensors/0x36")
            .filter { $0.topic == alertTopic }
    }

    @Test(
        "moisture 1 for a High-use species → dry, then 7 → cleared, then cold; each change published once, retained",
        arguments: StoreKind.bothStores)
    func dryThenCleared(_ kind: StoreKind) async throws {
        try await Self.withLinkedFern(kind) { phone in
            let dry = try await Self.reading(phone, moisture: 1)
            #expect(try await Self.reading(phone, moisture: 2).isEmpty)
            #expect(try await Self.reading(phone, moisture: 1).isEmpty)
            #expect(dry.count == 1 && dry.allSatisfy(\.retain))
            let body = try Self.json(try #require(dry.first))
            #expect(
                body["plant"] as? String == "Fern" && body["symbol"] as? String == "NEEX"
                    && body["ok"] as? Bool == false)
            let alerts = try #require(body["alerts"] as? [[String: Any]])
            #expect(alerts.count == 1)
            #expect(alerts.first?["kind"] as? String == "dry" && alerts.first?["sensor"] as? String == "0x36")
            #expect(alerts.first?["value"] as? Double == 1 && alerts.first?["limit"] as? Double == 5)
            #expect((alerts.first?["since"] as? String).flatMap(ISO8601Time.parse) != nil)

            let cleared = try await Self.reading(phone, moisture: 7)
            #expect(try await Self.reading(phone, moisture: 8).isEmpty)
            #expect(cleared.count == 1)
            #expect(try Self.json(try #require(cleared.first))["ok"] as? Bool == true)
            #expect((try Self.json(try #require(cleared.first))["alerts"] as? [Any])?.isEmpty == true)
            let cold = try await Self.reading(phone, moisture: 7, temperature: 20)
            #expect(cold.count == 1)
            #expect(
                ((try Self.json(try #require(cold.first))["alerts"] as? [[String: Any]])?.first?["kind"] as? String)
                    == "cold")
        }
    }

    @Test(
        "alert state and links survive a restart: no duplicate publication for the same state",
        arguments: StoreKind.bothStores)
    func survivesRestart(_ kind: StoreKind) async throws {
        try await withRestarts(kind, settings: .losslessPlants) { started, restart async throws in
            await started.addPlant("Fern", sensors: ["0x36"], as: "Bob")
            try await started.store.upsertSpecies([Self.neex])
            #expect(try await started.store.linkPlant(plant: "Fern", symbol: "NEEX", at: Date()) == .linked)
            await started.send(#"{"moisture":1,"temperature":70}"#, on: "rpi/sensors/0x36")
            #expect(started.messages(on: Self.alertTopic).count == 1)

            let relay = try await restart()
            #expect(try await relay.store.linkedPlant(plant: "Fern")?.species.symbol == "NEEX")
            await relay.send(#"{"moisture":2,"temperature":70}"#, on: "rpi/sensors/0x36")
            #expect(relay.messages(on: Self.alertTopic).isEmpty, "still dry: nothing new to say")
            await relay.send(#"{"moisture":7,"temperature":70}"#, on: "rpi/sensors/0x36")
            let messages = relay.messages(on: Self.alertTopic)
            #expect(messages.count == 1)
            #expect(try Self.json(try #require(messages.first))["ok"] as? Bool == true)
        }
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

/// What of the care alerts only a broker shows: a live subscriber sees a change as a new message,
/// and a subscriber that comes later gets the latest state, retained.
@Suite("Catalog: care alerts through a real broker", .serialized)
struct CatalogCareAlertBrokerTests {
    @Test("a dry alert reaches a live subscriber as new and a late one retained, with the latest state")
    func retainedForLateSubscribers() async throws {
        try await withRelay(settings: .losslessPlants) { relay in
            let (client, inbox) = try await relay.connectCollecting("rpi/fromrpi", "trellis/alerts/#")
            try await addPlant("Fern", sensors: ["0x36"], as: "Bob", from: client, answeredIn: inbox)
            let store = try relay.store
            try await store.upsertSpecies([CatalogCareAlertEngineTests.neex])
            #expect(try await store.linkPlant(plant: "Fern", symbol: "NEEX", at: Date()) == .linked)
            try await client.publishAndWait(
                topic: "rpi/sensors/0x36", payload: Array(#"{"moisture":1,"temperature":70}"#.utf8))
            let live = try await inbox.messages(on: CatalogCareAlertEngineTests.alertTopic)[0]
            #expect(live.retain == false, "a live subscriber sees it as a new message")
            #expect(live.text?.contains(#""kind":"dry""#) == true)

            let (_, lateInbox) = try await relay.connectCollecting(CatalogCareAlertEngineTests.alertTopic)
            let retained = try await lateInbox.messages(on: CatalogCareAlertEngineTests.alertTopic)[0]
            #expect(retained.retain && retained.payload == live.payload)
        }
    }
}
