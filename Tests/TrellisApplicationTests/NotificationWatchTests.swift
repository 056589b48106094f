import Foundation
import Logging
import Synchronization
import Testing
import TrellisCore
import TrellisRelay
import TrellisStore
import TrellisStoreSQLite
import TrellisTestSupport

@testable import TrellisApplication

/// The lasting conditions (docs/notifications.md): a sensor silent and a device offline read from
/// every store kind, a link down seen by the process, the store refusing writes (a real SQLite
/// lock held by another process) sent straight to a real HTTP server; each notified once it has
/// lasted past its rule's `after:`, and once only, however often it is watched.
@Suite("Notifications: lasting conditions")
struct NotificationWatchTests {
    static let start = Date(timeIntervalSince1970: 1_795_344_000)
    /// A notification the outbox's service sent through the channel before.
    static let earlier = OutboxNotification(
        channel: "hooks", eventKey: "care_alert:Fern:dry:0x36:start", title: "Fern is dry", body: "Fern is dry.",
        priority: 4, tags: [], created: start)

    static func plan(_ rules: [NotificationRule], url: String = "http://127.0.0.1:9/h") -> NotificationPlan {
        NotificationPlan(
            channels: [NotificationChannel(name: "hooks", kind: .webhook(url: url), secretFile: nil)], rules: rules)
    }

    static func watch(
        _ plan: NotificationPlan, store: any TrellisStore, senders: [String: any NotificationSending] = [:],
        links: @escaping @Sendable () -> [NotificationWatch.Link] = { [] }
    ) -> NotificationWatch {
        NotificationWatch(
            store: store, channels: NotificationChannels(plan: plan, senders: senders), logger: Logger(label: "test"),
            links: links)
    }

    /// The event keys of the notifications due at `now`, each then marked sent (as a channel took it).
    static func queued(_ store: any TrellisStore, at now: Date) async throws -> [String] {
        let taken = try await store.takeDueNotifications(now: now, lease: .seconds(60), limit: 100)
        for item in taken { try await store.markNotificationSent(id: item.id, at: now) }
        return taken.map(\.notification.eventKey).sorted()
    }

    @Test("the router: nothing before `after`, then one per channel, keyed by subject and start, held a month")
    func lastingRoute() {
        let router = NotificationRouter(
            plan: Self.plan([NotificationRule(when: .linkDown, to: ["hooks"], after: .seconds(300))]))
        let down = LastingCondition(event: .linkDown, subject: "broker link", label: "broker link", since: Self.start)
        #expect(router.notifications(lasting: [down], at: Self.start + 299).isEmpty)
        let made = router.notifications(lasting: [down], at: Self.start + 300)
        #expect(made.map(\.notification.eventKey) == ["link_down:broker link:1795344000000"])
        #expect(made.first?.hold == NotificationRouter.lastingHold)
        #expect(made.first?.notification.title == "The broker link is down")
        // A rule without `after:` takes its event's default: a day of silence.
        #expect(NotificationRule(when: .sensorSilent, to: ["hooks"]).after == .seconds(86_400))
        #expect(NotificationRule(when: .careAlert, to: ["hooks"]).after == nil)
    }

    @Test(
        "a silent sensor and an offline device are queued once past `after`, not before", arguments: StoreKind.allCases)
    func sensorAndDevice(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            _ = try await store.addPlant(name: "Fern", sensors: ["0x36", "0x37"], maxPlants: 5)
            try await store.recordReading(sensor: "0x36", moisture: 5, temperature: 70, at: Self.start)
            try await store.recordReading(sensor: "0x37", moisture: 5, temperature: 70, at: Self.start + 7200)
            _ = try await store.recordDeviceStatus(id: "lamp-1", powerstate: .online, maxDevices: 10, at: Self.start)
            _ = try await store.recordDeviceStatus(
                id: "lamp-1", powerstate: .offline, maxDevices: 10, at: Self.start + 600)
            _ = try await store.recordDeviceStatus(id: "lamp-2", powerstate: .online, maxDevices: 10, at: Self.start)
            let watch = Self.watch(
                Self.plan([
                    NotificationRule(when: .sensorSilent, to: ["hooks"], after: .seconds(6 * 3600)),
                    NotificationRule(when: .deviceOffline, to: ["hooks"], after: .seconds(3600))
                ]), store: store)
            await watch.pass(now: Self.start + 3000)
            #expect(try await Self.queued(store, at: Self.start + 3000).isEmpty)
            await watch.pass(now: Self.start + 4200)
            #expect(try await Self.queued(store, at: Self.start + 4200) == ["device_offline:lamp-1:1795344600000"])
            await watch.pass(now: Self.start + 6 * 3600)
            await watch.pass(now: Self.start + 6 * 3600 + 15)
            // 0x37 spoke two hours later; lamp-1's notification was taken above and is not queued again.
            #expect(
                try await Self.queued(store, at: Self.start + 6 * 3600 + 15) == ["sensor_silent:0x36:1795344000000"])
            await watch.pass(now: Self.start + 9 * 3600)
            #expect(try await Self.queued(store, at: Self.start + 9 * 3600) == ["sensor_silent:0x37:1795351200000"])
        }
    }

    @Test("a link down past `after` is queued once; back up, the spell is forgotten and a new one counts afresh")
    func linkDown() async throws {
        try await withStore(.inMemory) { store async throws in
            let up = Mutex(true)
            let watch = Self.watch(
                Self.plan([NotificationRule(when: .linkDown, to: ["hooks"], after: .seconds(300))]), store: store
            ) { [NotificationWatch.Link(name: "bridge cloud (out)", up: up.withLock { $0 })] }
            await watch.pass(now: Self.start)
            up.withLock { $0 = false }
            await watch.pass(now: Self.start + 15)
            await watch.pass(now: Self.start + 314)
            #expect(try await store.notificationBacklog().isEmpty)
            await watch.pass(now: Self.start + 315)
            await watch.pass(now: Self.start + 330)
            #expect(try await store.notificationBacklog() == ["hooks": 1])
            up.withLock { $0 = true }
            await watch.pass(now: Self.start + 345)
            up.withLock { $0 = false }
            await watch.pass(now: Self.start + 360)
            await watch.pass(now: Self.start + 660)
            #expect(
                try await Self.queued(store, at: Self.start + 660) == [
                    "link_down:bridge cloud (out):1795344015000", "link_down:bridge cloud (out):1795344360000"
                ])
        }
    }

    @Test("a store that refuses writes (a held lock) is notified straight to the webhook, once, within per_minute")
    func storeUnwritable() async throws {
        let secretFile = try NotificationConfigurationTests.secret("s3cret-hook-key\n")
        defer { try? FileManager.default.removeItem(atPath: secretFile) }
        let (receiver, port) = try await NotificationDeliveryTests.receiver(["--secret-file", secretFile])
        let directory = NSTemporaryDirectory() + "trellis-watch-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore(
            directory: directory, logger: Logger(label: "test"), patience: .milliseconds(200))
        let locker = try ToolProcess([
            "/usr/bin/python3", "-c",
            "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('BEGIN IMMEDIATE');"
                + " print('locked', flush=True); time.sleep(600)",
            directory + "/" + SQLiteStore.fileName
        ])
        try await locker.waitFor("locked")
        var plan = Self.plan(
            [NotificationRule(when: .storeUnwritable, to: ["hooks"], after: .seconds(60))],
            url: "http://127.0.0.1:\(port)/hook")
        plan.channels[0].secretFile = secretFile
        plan.channels[0].perMinute = 1
        let channels = NotificationChannels(
            plan: plan, senders: try NotificationSenders.make(plan, http: NotificationSenders.http))
        let watch = NotificationWatch(store: store, channels: channels, logger: Logger(label: "test")) { [] }
        try await store.recordReading(sensor: "0x36", moisture: 5, temperature: 70, at: Self.start)
        try await eventually("a commit failed", timeout: .seconds(60)) { !(await store.writeStatus().writable) }
        let now = Date()
        await watch.pass(now: now)
        await watch.pass(now: now + 59)
        // The channel sends its one of the minute first (the outbox's service shares it).
        #expect(await channels.send(Self.earlier, now: now + 59) == .sent)
        await watch.pass(now: now + 60)
        await watch.pass(now: now + 75)
        #expect(try NotificationDeliveryTests.requests(receiver).count == 1, "held to per_minute: 1")
        await watch.pass(now: now + 120)
        await watch.pass(now: now + 135)
        try await eventually("the second request", timeout: .seconds(30)) {
            (try? NotificationDeliveryTests.requests(receiver).count) == 2
        }
        try await locker.stop(SIGKILL)
        try await store.close()
        try await receiver.stop()
        let requests = try NotificationDeliveryTests.requests(receiver)
        #expect(requests.count == 2)
        #expect(requests.last?["signature_ok"] as? Bool == true)
        let body = try #require((requests.last?["body"] as? String).map { Data($0.utf8) })
        let json = try #require(JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(json["title"] as? String == "Trellis cannot write its state")
        #expect((json["event"] as? String)?.hasPrefix("store_unwritable:store:") == true)
        #expect((json["body"] as? String)?.contains("database is locked") == true, "\(json)")
    }
}
