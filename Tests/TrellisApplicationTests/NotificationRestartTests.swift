import Foundation
import Logging
import Testing
import TrellisCore
import TrellisRelay
import TrellisStore
import TrellisTestSupport

@testable import TrellisApplication

/// The promise, with the store reopened as a restart does and a real HTTP server as the
/// channel: the channel answers 503 for a minute (of the service's clock), the relay restarts in
/// that minute, one taker dies holding a lease; once the channel is back, every notification
/// arrives exactly once.
@Suite("Notifications: a channel away for a minute across a restart")
struct NotificationRestartTests {
    @Test("every notification arrives once", arguments: [StoreKind.directory, .postgres])
    func awayAcrossRestart(kind: StoreKind) async throws {
        let secretFile = try NotificationConfigurationTests.secret("s3cret-hook-key\n")
        let statusFile = try NotificationConfigurationTests.secret("503\n")
        defer { for file in [secretFile, statusFile] { try? FileManager.default.removeItem(atPath: file) } }
        let (receiver, port) = try await NotificationDeliveryTests.receiver([
            "--secret-file", secretFile, "--status-file", statusFile
        ])
        let plan = NotificationPlan(
            channels: [
                NotificationChannel(
                    name: "hooks", kind: .webhook(url: "http://127.0.0.1:\(port)/hook"), secretFile: secretFile,
                    perMinute: 600)
            ],
            rules: [NotificationRule(when: .careAlert, to: ["hooks"])])
        let senders = try NotificationSenders.make(plan, http: NotificationSenders.http)
        let router = NotificationRouter(plan: plan)
        let logger = Logger(label: "test")
        let t0 = Date()
        let plants = (1...6).map { "Plant\($0)" }
        try await withStorePlace(kind) { open in
            let first = try await open()
            for plant in plants {
                let update = CareAlertUpdate(alerts: [], changed: true, started: ["dry:0x36"])
                for event in NotificationRouter.Event.careAlerts(plant: plant, update: update) {
                    await router.enqueue(event, at: t0, store: first, logger: logger)
                }
            }
            let before = NotificationService(plan: plan, store: first, senders: senders, logger: logger)
            let failed = await before.pass(now: t0)
            #expect(failed.count == plants.count)
            #expect(failed.values.allSatisfy { $0 == .failed("HTTP 503 from http://127.0.0.1:\(port)") }, "\(failed)")
            _ = await before.pass(now: t0 + 20)
            // A taker that dies holding two of them: they wait out their lease.
            let held = try await first.takeDueNotifications(now: t0 + 40, lease: .seconds(60), limit: 2)
            #expect(held.count == 2)
            try await first.close()

            let second = try await open()
            let after = NotificationService(plan: plan, store: second, senders: senders, logger: logger)
            _ = await after.pass(now: t0 + 45)
            try "200\n".write(toFile: statusFile, atomically: true, encoding: .utf8)
            var sent = 0
            for offset in stride(from: 60, through: 300, by: 15) {
                sent += await after.pass(now: t0 + Double(offset)).values.filter { $0 == .sent }.count
            }
            #expect(sent == plants.count)
            #expect(try await second.notificationBacklog() == [:])
            try await second.close()
        }
        try await receiver.stop()
        let requests = try NotificationDeliveryTests.requests(receiver)
        let delivered = requests.filter { $0["status"] as? Int == 200 }.compactMap { request -> String? in
            guard let body = (request["body"] as? String).map({ Data($0.utf8) }),
                let json = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
            else { return nil }
            return json["event"] as? String
        }
        #expect(delivered.sorted() == plants.map { "care_alert:\($0):dry:0x36:start" }.sorted())
        #expect(requests.filter { $0["status"] as? Int == 503 }.count >= plants.count * 2)
        #expect(requests.allSatisfy { $0["signature_ok"] as? Bool == true })
    }
}
