import Foundation
import Logging
import Testing
import TrellisCore
import TrellisRelay
import TrellisStore
import TrellisTestSupport

@testable import TrellisApplication

/// Notifications sent to a real HTTP server (Tests/Notifications/receiver.py, Python's
/// http.server on a free loopback port): the webhook's body and its signature recomputed by the
/// receiver from the documented format, ntfy's publish request (URL, headers, body, token), a
/// server answering 500 (retried after a backoff), and a server that never answers (bounded).
@Suite("Notifications: delivery to real servers")
struct NotificationDeliveryTests {
    /// The receiver, started with `arguments`, and its port.
    static func receiver(_ arguments: [String]) async throws -> (ToolProcess, Int) {
        let script = Repository.root.appendingPathComponent("Tests/Notifications/receiver.py").path
        let tool = try ToolProcess(["/usr/bin/python3", script] + arguments)
        try await tool.waitFor("listening ")
        let line = try #require(tool.text.split(separator: "\n").first { $0.hasPrefix("listening ") })
        return (tool, try #require(Int(line.dropFirst("listening ".count))))
    }

    /// The requests the receiver recorded so far, each a JSON object.
    static func requests(_ tool: ToolProcess) throws -> [[String: Any]] {
        try tool.text.split(separator: "\n").filter { $0.hasPrefix("request ") }.map {
            try #require(
                JSONSerialization.jsonObject(with: Data($0.dropFirst("request ".count).utf8)) as? [String: Any])
        }
    }

    static let fern = OutboxNotification(
        channel: "hooks", eventKey: "care_alert:Fern:dry:0x37:start", title: "Fern is dry",
        body: "Fern is dry (0x37: 12, limit 20).", priority: 4, tags: ["seedling", "dry"],
        created: Date(timeIntervalSince1970: 1_795_344_000))

    @Test("webhook: the JSON body, signed as documented, through the outbox; sent once")
    func webhook() async throws {
        let secretFile = try NotificationConfigurationTests.secret("s3cret-hook-key\n")
        let (tool, port) = try await Self.receiver(["--secret-file", secretFile])
        defer { try? FileManager.default.removeItem(atPath: secretFile) }
        let plan = NotificationPlan(
            channels: [
                NotificationChannel(
                    name: "hooks", kind: .webhook(url: "http://127.0.0.1:\(port)/api/webhook/plants"),
                    secretFile: secretFile)
            ])
        try await withStore(.inMemory) { store in
            let service = NotificationService(
                plan: plan, store: store, senders: try NotificationSenders.make(plan, http: NotificationSenders.http),
                logger: Logger(label: "test"))
            _ = try await store.enqueueNotification(Self.fern, hold: .seconds(3600), cancels: nil)
            let outcomes = await service.pass(now: Self.fern.created)
            #expect(Array(outcomes.values) == [.sent])
            #expect(try await store.notificationBacklog() == [:])
            #expect(await service.pass(now: Self.fern.created + 120).isEmpty)
        }
        try await tool.waitFor("request ")
        let requests = try Self.requests(tool)
        try await tool.stop()
        #expect(requests.count == 1)
        let request = try #require(requests.first)
        #expect(request["path"] as? String == "/api/webhook/plants" && request["method"] as? String == "POST")
        #expect(request["signature_ok"] as? Bool == true)
        let headers = try #require(request["headers"] as? [String: String])
        #expect(headers["content-type"] == "application/json")
        let text = try #require(request["body"] as? String)
        let body = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(body["event"] as? String == "care_alert:Fern:dry:0x37:start")
        #expect(body["title"] as? String == "Fern is dry" && body["priority"] as? Int == 4)
        #expect(body["tags"] as? [String] == ["seedling", "dry"] && body["channel"] as? String == "hooks")
        #expect(body["created"] as? String == ISO8601Time.format(Self.fern.created))
    }

    @Test("ntfy: POST to the topic URL with Title, Priority, Tags and the bearer token; the body is the message")
    func ntfy() async throws {
        let tokenFile = try NotificationConfigurationTests.secret("tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2\n")
        let (tool, port) = try await Self.receiver([])
        let plan = NotificationPlan(
            channels: [
                NotificationChannel(
                    name: "phone", kind: .ntfy(url: "http://127.0.0.1:\(port)/plants"), secretFile: tokenFile)
            ])
        var notification = Self.fern
        notification.channel = "phone"
        let senders = try NotificationSenders.make(plan, http: NotificationSenders.http)
        #expect(await senders["phone"]?.send(notification) == .sent)
        try await tool.waitFor("request ")
        let request = try #require(try Self.requests(tool).first)
        try await tool.stop()
        let headers = try #require(request["headers"] as? [String: String])
        #expect(request["path"] as? String == "/plants")
        #expect(headers["title"] == "Fern is dry" && headers["priority"] == "4" && headers["tags"] == "seedling,dry")
        #expect(headers["authorization"] == "Bearer tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2")
        #expect(request["body"] as? String == "Fern is dry (0x37: 12, limit 20).")
    }

    @Test("a server answering 500: failed, retried after the backoff, then sent once it recovers")
    func serverError() async throws {
        let secretFile = try NotificationConfigurationTests.secret("k")
        let (failing, port) = try await Self.receiver(["--secret-file", secretFile, "--status", "500"])
        let plan = NotificationPlan(
            channels: [
                NotificationChannel(
                    name: "hooks", kind: .webhook(url: "http://127.0.0.1:\(port)/h"), secretFile: secretFile)
            ])
        try await withStore(.inMemory) { store in
            let service = NotificationService(
                plan: plan, store: store, senders: try NotificationSenders.make(plan, http: NotificationSenders.http),
                logger: Logger(label: "test"))
            let id = try #require(
                try await store.enqueueNotification(Self.fern, hold: .seconds(3600), cancels: nil))
            let start = Self.fern.created
            #expect(await service.pass(now: start)[id] == .failed("HTTP 500 from http://127.0.0.1:\(port)"))
            // Not due before the first backoff (5 s); due after it, with the attempt counted.
            #expect(await service.pass(now: start + 4).isEmpty)
            #expect(await service.pass(now: start + 5)[id] != nil)
            #expect(await service.pass(now: start + 14).isEmpty)
            try await failing.stop()
            #expect(try Self.requests(failing).count == 2)
            #expect(try await store.notificationBacklog() == ["hooks": 1])
        }
    }

    @Test("a server that never answers costs at most the timeout")
    func hangingServer() async throws {
        let (tool, port) = try await Self.receiver(["--hang"])
        let sender = WebhookSender(
            channel: "hooks", url: "http://127.0.0.1:\(port)/h", secret: Array("k".utf8),
            http: NotificationSenders.http,
            timeout: .seconds(1))
        let clock = ContinuousClock()
        let started = clock.now
        let outcome = await sender.send(Self.fern)
        #expect(clock.now - started < .seconds(5))
        guard case .failed = outcome else {
            Issue.record("a hanging server counted as sent")
            return
        }
        try await tool.stop(SIGKILL)
    }

    @Test("a secret file readable by every user is refused at start, naming it")
    func openSecret() throws {
        let open = try NotificationConfigurationTests.secret("k", mode: 0o644)
        let plan = NotificationPlan(
            channels: [
                NotificationChannel(name: "hooks", kind: .webhook(url: "http://127.0.0.1:9/h"), secretFile: open)
            ])
        #expect(throws: CommandFailure.self) { try NotificationSenders.make(plan, http: NotificationSenders.http) }
    }

    @Test("a huge event is cut to a bounded title and body")
    func hugeBody() {
        let plan = NotificationPlan(
            channels: [
                NotificationChannel(name: "hooks", kind: .webhook(url: "http://127.0.0.1:9/h"), secretFile: nil)
            ],
            rules: [NotificationRule(when: .careAlert, to: ["hooks"])])
        let event = NotificationRouter.Event(
            kind: .careAlert, key: "care_alert:x", title: String(repeating: "T", count: 100_000),
            body: String(repeating: "B", count: 10_000_000))
        let made = NotificationRouter(plan: plan).notifications(for: event, at: Date())
        #expect(made.count == 1)
        #expect(made.first?.notification.title.count == NotificationRouter.maxTitle)
        #expect(made.first?.notification.body.count == NotificationRouter.maxBody)
    }
}
