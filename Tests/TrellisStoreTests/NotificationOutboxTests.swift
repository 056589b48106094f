import Foundation
import Testing
import TrellisCore
import TrellisStore
import TrellisTestSupport

/// The notification outbox on every store kind, as one table: sent once per event within a hold,
/// a start cleared before it went out sends nothing, taken under a lease, retried when it failed,
/// and kept across a reopening.
@Suite("Notification outbox on every store")
struct NotificationOutboxTests {
    static func fern(_ key: String, at seconds: Double, channel: String = "phone") -> OutboxNotification {
        OutboxNotification(
            channel: channel, eventKey: key, title: "Fern is dry", body: "moisture 12 < 20", priority: 4,
            tags: ["droplet", "fern"], created: instant(seconds))
    }

    @Test("an event key is kept once within its hold, again after it; channels apart", arguments: StoreKind.allCases)
    func heldOncePerEvent(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let key = "care_alert:fern:dry:start"
            let first = try await store.enqueueNotification(Self.fern(key, at: 0), hold: .seconds(3600), cancels: nil)
            #expect(first != nil)
            #expect(
                try await store.enqueueNotification(Self.fern(key, at: 600), hold: .seconds(3600), cancels: nil) == nil)
            #expect(
                try await store.enqueueNotification(
                    Self.fern(key, at: 600, channel: "hooks"), hold: .seconds(3600), cancels: nil) != nil)
            #expect(try await store.notificationBacklog() == ["phone": 1, "hooks": 1])
            let taken = try await store.takeDueNotifications(now: instant(601), lease: .seconds(60), limit: 10)
            #expect(taken.map(\.notification.channel).sorted() == ["hooks", "phone"])
            #expect(taken.first { $0.notification.channel == "phone" }?.notification.tags == ["droplet", "fern"])
            for item in taken { try await store.markNotificationSent(id: item.id, at: instant(602)) }
            #expect(try await store.notificationBacklog() == [:])
            // Past the hold the same event is news again.
            #expect(
                try await store.enqueueNotification(Self.fern(key, at: 3601), hold: .seconds(3600), cancels: nil) != nil
            )
            #expect(try await store.notificationBacklog() == ["phone": 1])
        }
    }

    @Test("a clear while its start waits unsent drops both", arguments: StoreKind.allCases)
    func startClearedBeforeSent(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let start = "care_alert:fern:dry:start"
            _ = try await store.enqueueNotification(Self.fern(start, at: 0), hold: .seconds(3600), cancels: nil)
            let clear = try await store.enqueueNotification(
                Self.fern("care_alert:fern:dry:clear", at: 60), hold: .seconds(3600), cancels: start)
            #expect(clear == nil)
            #expect(try await store.takeDueNotifications(now: instant(61), lease: .seconds(60), limit: 10).isEmpty)
            // Once the start went out, its clear is kept.
            _ = try await store.enqueueNotification(Self.fern(start, at: 7200), hold: .seconds(3600), cancels: nil)
            let sent = try await store.takeDueNotifications(now: instant(7200), lease: .seconds(60), limit: 10)
            try await store.markNotificationSent(id: try #require(sent.first?.id), at: instant(7201))
            #expect(
                try await store.enqueueNotification(
                    Self.fern("care_alert:fern:dry:clear", at: 7300), hold: .seconds(3600), cancels: start) != nil)
        }
    }

    @Test("taken under a lease, due again when it lapses; a failure counts and waits", arguments: StoreKind.allCases)
    func leaseAndRetry(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            var later = Self.fern("store_unwritable", at: 0)
            later.due = instant(500)
            _ = try await store.enqueueNotification(later, hold: .seconds(60), cancels: nil)
            _ = try await store.enqueueNotification(
                Self.fern("link_down:cloud", at: 0), hold: .seconds(60), cancels: nil)
            let first = try await store.takeDueNotifications(now: instant(1), lease: .seconds(30), limit: 10)
            #expect(first.map(\.notification.eventKey) == ["link_down:cloud"])
            // Leased: not taken again until the lease ends unsettled.
            #expect(try await store.takeDueNotifications(now: instant(20), lease: .seconds(30), limit: 10).isEmpty)
            let again = try await store.takeDueNotifications(now: instant(31), lease: .seconds(30), limit: 10)
            #expect(again.map(\.id) == first.map(\.id) && again.first?.attempts == 0)
            try await store.markNotificationFailed(id: first[0].id, reason: "HTTP 500", retryAt: instant(100))
            #expect(try await store.takeDueNotifications(now: instant(99), lease: .seconds(30), limit: 10).isEmpty)
            let retried = try await store.takeDueNotifications(now: instant(100), lease: .seconds(30), limit: 10)
            #expect(retried.map(\.attempts) == [1])
            try await store.markNotificationSent(id: retried[0].id, at: instant(101))
            // The quiet-hours one waits for its due time; the limit is honoured.
            #expect(try await store.takeDueNotifications(now: instant(500), lease: .seconds(30), limit: 0).isEmpty)
            #expect(
                try await store.takeDueNotifications(now: instant(500), lease: .seconds(30), limit: 5).map(
                    \.notification.eventKey) == ["store_unwritable"])
            #expect(try await store.pruneSentNotifications(before: instant(102)) == 1)
            #expect(try await store.notificationBacklog() == ["phone": 1])
        }
    }

    @Test("kept across a reopening", arguments: StoreKind.allCases)
    func durable(kind: StoreKind) async throws {
        try await withStorePlace(kind) { open in
            let store = try await open()
            _ = try await store.enqueueNotification(
                Self.fern("sensor_silent:s1", at: 0), hold: .seconds(60), cancels: nil)
            try await store.close()
            let reopened = try await open()
            let taken = try await reopened.takeDueNotifications(now: instant(1), lease: .seconds(30), limit: 10)
            try await reopened.close()
            #expect(taken.map(\.notification.eventKey) == ["sensor_silent:s1"])
        }
    }

    @Test(
        "a care alert's notifications are queued by the write that starts or clears it, and nothing when nothing changed",
        arguments: StoreKind.allCases)
    func queuedWithTheAlert(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.upsertSpecies([
                Species(
                    symbol: "NEEX", scientificName: "Nephrolepis exaltata", commonName: "Boston swordfern",
                    moistureUse: .high, shadeTolerance: .tolerant, minTempF: 28)
            ])
            _ = try await store.addPlant(name: "Fern", sensors: ["0x36"], maxPlants: 7)
            _ = try await store.linkPlant(plant: "Fern", symbol: "NEEX", at: instant(1))
            let dry = [CareCondition(kind: .dry, sensor: "0x36", value: 2, limit: 5)]
            let notify: @Sendable (CareAlertUpdate) -> [PendingNotification] = { update in
                (update.started.map { "start:" + $0 } + update.cleared.map { "clear:" + $0 }).map {
                    PendingNotification(Self.fern($0, at: 10), hold: .seconds(3600))
                }
            }
            let started = try await store.updateCareAlerts(
                plant: "Fern", conditions: dry, at: instant(10), notifying: notify)
            #expect(started.started == ["dry:0x36"])
            let again = try await store.updateCareAlerts(
                plant: "Fern", conditions: dry, at: instant(20), notifying: notify)
            #expect(!again.changed)
            _ = try await store.updateCareAlerts(plant: "Fern", conditions: [], at: instant(30), notifying: notify)
            let queued = try await store.takeDueNotifications(now: instant(31), lease: .seconds(60), limit: 10)
            #expect(queued.map(\.notification.eventKey).sorted() == ["clear:dry:0x36", "start:dry:0x36"])
        }
    }

    @Test(
        "a press's notification is queued by the write that counts it, made from the button's new state",
        arguments: StoreKind.allCases)
    func queuedWithThePress(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let notify: @Sendable (ButtonState) -> [PendingNotification] = { state in
                [PendingNotification(Self.fern("button_pressed:door:\(state.total)", at: 1), hold: .seconds(3600))]
            }
            _ = try await store.recordPress(button: "door", at: instant(1), historyLimit: 20, notifying: notify)
            let second = try await store.recordPress(
                button: "door", at: instant(2), historyLimit: 20, notifying: notify)
            #expect(second.snapshot.total == 2)
            _ = try await store.recordPress(button: "door", at: instant(3), historyLimit: 20)
            let queued = try await store.takeDueNotifications(now: instant(4), lease: .seconds(60), limit: 10)
            #expect(queued.map(\.notification.eventKey).sorted() == ["button_pressed:door:1", "button_pressed:door:2"])
        }
    }
}
