import Foundation
import Testing
import TrellisCore
import TrellisRelay
import TrellisStore
import TrellisTestSupport

/// What the relay's handlers queue in the notification outbox, on the engine over SQLite and
/// PostgreSQL: a care alert's start and clear (queued by the alert's own write), and presses once
/// a `button_pressed` rule asks for them.
@Suite("Notifications: queued by the handlers, on the engine over every store")
struct NotificationEngineTests {
    static var settings: RelaySettings {
        var settings = RelaySettings.losslessPlants
        settings.notifications = NotificationPlan(
            channels: [
                NotificationChannel(name: "hooks", kind: .webhook(url: "http://127.0.0.1:9/h"), secretFile: nil)
            ],
            rules: [
                NotificationRule(when: .careAlert, to: ["hooks"]),
                NotificationRule(when: .buttonPressed, to: ["hooks"])
            ])
        return settings
    }

    /// The notifications due, each then marked sent (as a channel took it).
    static func queued(_ store: any TrellisStore) async throws -> [OutboxNotification] {
        let taken = try await store.takeDueNotifications(now: Date() + 60, lease: .seconds(60), limit: 100)
        for item in taken { try await store.markNotificationSent(id: item.id, at: Date()) }
        return taken.map(\.notification)
    }

    @Test(
        "a care alert's start and clear each queue one notification; a press queues one",
        arguments: StoreKind.bothStores)
    func careAlertAndPress(_ kind: StoreKind) async throws {
        try await withPhone(kind, settings: Self.settings, name: "Bob") { phone in
            let store = phone.harness.store
            _ = try await phone.ask(phone.request("1", "REQ_addNewPlant", payload: "Fern,0x36"))
            try await store.upsertSpecies([CatalogCareAlertEngineTests.neex])
            _ = try await store.linkPlant(plant: "Fern", symbol: "NEEX", at: Date())
            #expect(try await CatalogCareAlertEngineTests.reading(phone, moisture: 1).count == 1)
            #expect(try await CatalogCareAlertEngineTests.reading(phone, moisture: 2).isEmpty)
            let started = try await Self.queued(store)
            #expect(started.map(\.eventKey) == ["care_alert:Fern:dry:0x36:start"])
            #expect(started.first?.title == "Fern is dry" && started.first?.channel == "hooks")
            #expect(started.first?.body.contains("0x36: 1, limit 5") == true, "\(started)")
            _ = try await CatalogCareAlertEngineTests.reading(phone, moisture: 7)
            #expect(try await Self.queued(store).map(\.eventKey) == ["care_alert:Fern:dry:0x36:clear"])

            _ = try await phone.send("2026-11-29T08:00:00Z", on: "p2o/buttons/door/press")
            let pressed = try await Self.queued(store)
            #expect(pressed.map(\.eventKey) == ["button_pressed:door:1795939200000"])
            #expect(pressed.first?.body == "Button door was pressed at 2026-11-29T08:00:00.000Z (1 in all).")
        }
    }
}
