import Foundation
import Logging
import Testing
import TrellisCore
import TrellisStore
import TrellisTestSupport

@testable import TrellisApplication

/// Email sent to a real SMTP server (aiosmtpd, ``EmailServer``) that requires STARTTLS and a
/// login: the message arrives through the outbox with its envelope, headers and body as Python's
/// email parser reads them; PLAIN, LOGIN and smtps:// work; a wrong password, a server without
/// STARTTLS, a certificate from a CA not trusted and a server that never answers each fail with a
/// reason that names the server and holds no password.
@Suite("Notifications: email through a real SMTP server")
struct EmailDeliveryTests {
    static let fern = OutboxNotification(
        channel: "mail", eventKey: "care_alert:Fern:dry:0x37:start", title: "Fern is dry 🌿 — gießen, bitte",
        body: "Fern is dry (0x37: 12, limit 20).\n.a line that starts with a dot\n.\nend", priority: 4,
        tags: ["seedling", "dry"], created: Date(timeIntervalSince1970: 1_795_344_000))

    /// A sender for the server on `port`, trusting the test CA unless told otherwise.
    static func sender(
        port: Int, pki: TestCertificates, caFile: String?? = nil, implicitTLS: Bool = false,
        password: String = EmailServer.password, from: String? = "trellis@relay.example", host: String = "127.0.0.1"
    ) throws -> EmailSender {
        let login = try NotificationConfigurationTests.secret("\(EmailServer.user)\n\(password)\n")
        defer { try? FileManager.default.removeItem(atPath: login) }
        let plan = NotificationPlan(channels: [
            NotificationChannel(
                name: "mail",
                kind: .email(
                    to: "me@example.org", host: host, port: port, from: from,
                    implicitTLS: implicitTLS, caFile: caFile ?? pki.caCertificate),
                secretFile: login)
        ])
        return try #require(try NotificationSenders.make(plan, http: NotificationSenders.http)["mail"] as? EmailSender)
    }

    static func reason(_ delivery: NotificationDelivery) -> String? {
        if case let .failed(reason) = delivery { reason } else { nil }
    }

    @Test("through the outbox: one message after STARTTLS and AUTH PLAIN, envelope, headers and body as sent")
    func delivered() async throws {
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        let server = try await EmailServer.start(["--cert", pki.serverCertificate, "--key", pki.serverKey])
        let sender = try Self.sender(port: server.port, pki: pki)
        try await withStore(.inMemory) { store in
            let channel = NotificationChannel(
                name: "mail", kind: .email(to: "me@example.org", host: "127.0.0.1", port: server.port), secretFile: nil)
            let service = NotificationService(
                plan: NotificationPlan(channels: [channel]), store: store, senders: ["mail": sender],
                logger: Logger(label: "test"))
            _ = try await store.enqueueNotification(Self.fern, hold: .seconds(3600), cancels: nil)
            #expect(Array(await service.pass(now: Self.fern.created).values) == [.sent])
            #expect(try await store.notificationBacklog() == [:])
            #expect(await service.pass(now: Self.fern.created + 120).isEmpty)
        }
        let messages = try server.messages()
        let logins = server.logins
        try await server.stop()
        #expect(logins == ["PLAIN bob ok tls=True"])
        try #require(messages.count == 1)
        let message = messages[0]
        #expect(message["mail_from"] as? String == "trellis@relay.example")
        #expect(message["rcpt_tos"] as? [String] == ["me@example.org"])
        #expect(message["tls"] as? Bool == true && message["login"] as? String == "bob")
        #expect(message["defects"] as? [String] == [], "\(message)")
        #expect((message["longest_line"] as? Int ?? 999) <= 78 && message["bare_line_feeds"] as? Int == 0)
        let headers = try #require(message["headers"] as? [String: String])
        #expect(headers["Subject"] == Self.fern.title)
        #expect(headers["From"] == "Trellis <trellis@relay.example>" && headers["To"] == "me@example.org")
        #expect(headers["Date"] == "Sun, 22 Nov 2026 10:40:00 +0000" && headers["MIME-Version"] == "1.0")
        #expect(headers["Message-ID"]?.hasSuffix(".1795344000000@relay.example>") == true)
        #expect(
            headers["Content-Type"]?.contains("text/plain") == true
                && headers["Content-Type"]?.contains("utf-8") == true)
        #expect(headers["X-Trellis-Event"] == Self.fern.eventKey)
        let body = try #require(message["body"] as? String)
        #expect(
            body.hasPrefix(Self.fern.body + "\n\n-- \nTrellis, channel mail, event care_alert:Fern:dry:0x37:start"),
            "\(body)")
    }

    @Test("AUTH LOGIN when the server offers only LOGIN; without from:, the sender is trellis@ the host's name")
    func authLogin() async throws {
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        let server = try await EmailServer.start(
            ["--cert", pki.serverCertificate, "--key", pki.serverKey, "--mechanisms", "LOGIN"])
        #expect(try await Self.sender(port: server.port, pki: pki, from: nil).send(Self.fern) == .sent)
        let (logins, messages) = (server.logins, try server.messages())
        try await server.stop()
        #expect(logins == ["LOGIN bob ok tls=True"] && messages.count == 1)
        #expect(messages.first?["mail_from"] as? String == "trellis@\(EmailSender.hostName)")
    }

    @Test("smtps://: TLS from the first byte, then AUTH")
    func implicitTLS() async throws {
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        let server = try await EmailServer.start(
            ["--cert", pki.serverCertificate, "--key", pki.serverKey, "--implicit-tls"])
        let outcome = try await Self.sender(port: server.port, pki: pki, implicitTLS: true).send(Self.fern)
        #expect(outcome == .sent)
        let (logins, messages) = (server.logins, try server.messages())
        try await server.stop()
        #expect(logins == ["PLAIN bob ok tls=True"] && messages.first?["tls"] as? Bool == true)
    }

    @Test("over IPv6: the certificate checked against the address ::1")
    func ipv6() async throws {
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        let server = try await EmailServer.start(
            ["--cert", pki.serverCertificate, "--key", pki.serverKey, "--host", "::1"])
        let outcome = try await Self.sender(port: server.port, pki: pki, host: "::1").send(Self.fern)
        let (logins, count) = (server.logins, try server.messages().count)
        try await server.stop()
        #expect(outcome == .sent)
        #expect(logins == ["PLAIN bob ok tls=True"] && count == 1)
    }

    @Test("a wrong password: refused, the reason names the server and the code, never the password")
    func wrongPassword() async throws {
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        let server = try await EmailServer.start(["--cert", pki.serverCertificate, "--key", pki.serverKey])
        let wrong = "not-the-Password-42"
        let outcome = try await Self.sender(port: server.port, pki: pki, password: wrong).send(Self.fern)
        let (logins, count) = (server.logins, try server.messages().count)
        try await server.stop()
        let reason = try #require(Self.reason(outcome))
        #expect(reason.hasPrefix("127.0.0.1:\(server.port) refused the login of bob: 535"), "\(reason)")
        #expect(!reason.contains(wrong) && !reason.contains(EmailServer.password))
        #expect(logins == ["PLAIN bob refused tls=True"] && count == 0)
    }

    @Test("a server without STARTTLS is refused before any login, though it offers AUTH in clear")
    func noStartTLS() async throws {
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        let server = try await EmailServer.start(["--auth-in-clear"])
        let outcome = try await Self.sender(port: server.port, pki: pki).send(Self.fern)
        let (logins, count) = (server.logins, try server.messages().count)
        try await server.stop()
        #expect(Self.reason(outcome) == "127.0.0.1:\(server.port) does not offer STARTTLS; mail is never sent in clear")
        #expect(logins.isEmpty && count == 0)
    }

    @Test("a certificate from a CA not trusted is refused, with the CA file and with the system's CAs")
    func untrusted() async throws {
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        let rogue = try await EmailServer.start(
            ["--cert", pki.untrustedServerCertificate, "--key", pki.untrustedServerKey])
        let ours = try await EmailServer.start(["--cert", pki.serverCertificate, "--key", pki.serverKey])
        let withCA = try await Self.sender(port: rogue.port, pki: pki).send(Self.fern)
        let system = try await Self.sender(port: ours.port, pki: pki, caFile: .some(nil)).send(Self.fern)
        let seen = (rogue.logins + ours.logins, try rogue.messages().count + ours.messages().count)
        try await rogue.stop()
        try await ours.stop()
        for (outcome, port) in [(withCA, rogue.port), (system, ours.port)] {
            let reason = try #require(Self.reason(outcome))
            #expect(reason.hasPrefix("TLS with 127.0.0.1:\(port) failed"), "\(reason)")
            #expect(reason.contains("CERTIFICATE_VERIFY_FAILED"), "\(reason)")
        }
        #expect(seen.0.isEmpty && seen.1 == 0)
    }

    @Test("a server that never answers costs at most the timeout; one that refuses the connection, nothing")
    func silentServer() async throws {
        let listener = try LoopbackListener(backlog: 8)
        defer { close(listener.fd) }
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        var sender = try Self.sender(port: listener.port, pki: pki)
        sender.timeout = .seconds(1)
        let clock = ContinuousClock()
        let started = clock.now
        let outcome = await sender.send(Self.fern)
        #expect(clock.now - started < .seconds(5))
        #expect(Self.reason(outcome) == "127.0.0.1:\(listener.port) did not finish within 1 s")
        // A port where nothing listens: refused at once, named.
        let closed = try LoopbackListener(backlog: nil)
        defer { close(closed.fd) }
        let refused = try await Self.sender(port: closed.port, pki: pki).send(Self.fern)
        #expect(Self.reason(refused)?.hasPrefix("cannot connect to 127.0.0.1:\(closed.port)") == true)
    }

    @Test("trellis notify test: the configuration as written (from:, ca_file:) sends one message")
    func notifyTest() async throws {
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        let server = try await EmailServer.start(["--cert", pki.serverCertificate, "--key", pki.serverKey])
        let login = try NotificationConfigurationTests.secret("\(EmailServer.user)\n\(EmailServer.password)\n")
        defer { try? FileManager.default.removeItem(atPath: login) }
        let file = try EffectiveConfigurationTests.file(
            """
            notifications:
              channels:
                mail: { email: "me@example.org", smtp: "smtp://127.0.0.1:\(server.port)", login_file: \(login), from: plants@home.example, ca_file: \(pki.caCertificate) }

            """)
        let configuration = try await EffectiveConfiguration.load(file: file, environment: [:])
        let said = try await NotificationTest.run(configuration, channel: "mail")
        let messages = try server.messages()
        try await server.stop()
        #expect(said.hasPrefix("sent a test notification through mail (email me@example.org via smtp://127.0.0.1:"))
        #expect(messages.count == 1 && messages.first?["mail_from"] as? String == "plants@home.example")
        #expect((messages.first?["headers"] as? [String: String])?["Subject"] == "Trellis test notification")
    }
}
