import Configuration
import Foundation
import Testing
import TrellisApplication
import TrellisCore

/// The `notifications:` section: the issue's example read as written (its secret files private),
/// and each bad member refused with its place named; secrets never shown.
@Suite("Notification configuration")
struct NotificationConfigurationTests {
    /// A private file holding `text` (mode `mode`).
    static func secret(_ text: String, mode: Int = 0o600) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-secret-\(UUID())").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    static func example(token: String, hook: String, login: String) -> String {
        """
        notifications:
          channels:
            phone:   { ntfy: "https://ntfy.example/plants", token_file: \(token) }
            hooks:   { webhook: "http://127.0.0.1:8123/api/webhook/plants", secret_file: \(hook) }
            mail:    { email: "me@example.org", smtp: "smtp://mail.example.org:587", login_file: \(login) }
          rules:
            - when: care_alert        # also: sensor_silent, device_offline, button_pressed, store_unwritable, link_down
              to: [phone, hooks]
              quiet_hours: "22:00-07:00"

        """
    }

    @Test("the issue's example reads as written; config check shows the channels and rules, no secret")
    func example() async throws {
        let (token, hook, login) = (
            try Self.secret("tk_secret_token"), try Self.secret("hook-secret"), try Self.secret("me\npassw0rd")
        )
        let file = try EffectiveConfigurationTests.file(Self.example(token: token, hook: hook, login: login))
        let configuration = try await EffectiveConfiguration.load(file: file, environment: [:])
        let plan = configuration.notifications
        #expect(
            plan.channels == [
                NotificationChannel(name: "phone", kind: .ntfy(url: "https://ntfy.example/plants"), secretFile: token),
                NotificationChannel(
                    name: "hooks", kind: .webhook(url: "http://127.0.0.1:8123/api/webhook/plants"), secretFile: hook),
                NotificationChannel(
                    name: "mail", kind: .email(to: "me@example.org", host: "mail.example.org", port: 587),
                    secretFile: login)
            ])
        #expect(
            plan.rules == [
                NotificationRule(
                    when: .careAlert, to: ["phone", "hooks"], quietHours: QuietHours(start: 22 * 60, end: 7 * 60))
            ])
        let report = configuration.report.joined(separator: "\n")
        #expect(report.contains("notifications.channels.hooks = webhook http://127.0.0.1:8123/api/webhook/plants"))
        #expect(report.contains("notifications.rules[0]: when care_alert to phone, hooks, quiet 22:00-07:00"))
        for secret in ["tk_secret_token", "hook-secret", "passw0rd"] { #expect(!report.contains(secret)) }
        #expect(ExampleConfiguration.text.contains("# notifications:"))
    }

    @Test(
        "each bad member is refused with its place",
        arguments: [
            (
                "channels: { hooks: { webhook: \"ftp://127.0.0.1/x\", secret_file: SECRET } }",
                "notifications.channels.hooks.webhook: ftp://127.0.0.1/x is not an http:// or https:// URL"
            ),
            (
                "channels: { phone: { ntfy: \"file:///etc/passwd\" } }",
                "notifications.channels.phone.ntfy: file:///etc/passwd is not an http:// or https:// URL"
            ),
            (
                "channels: { mail: { email: a@b.example, smtp: \"http://mail.example\", login_file: SECRET } }",
                "notifications.channels.mail.smtp: http://mail.example is not smtp://HOST[:PORT] or smtps://HOST[:PORT]"
            ),
            (
                "channels: { mail: { email: a@b.example, smtp: \"smtp://mail.example\", login_file: SECRET, ca_file: /nonexistent/ca.pem } }",
                "notifications.channels.mail.ca_file: cannot read /nonexistent/ca.pem"
            ),
            (
                "channels: { mail: { email: a@b.example, smtp: \"smtp://mail.example\", login_file: SECRET, from: \"x <y@z>\" } }",
                "notifications.channels.mail.from: x <y@z> is not an address"
            ),
            (
                "channels: { mail: { email: \"a@b.example\\r\\nRCPT TO:<x@y>\", smtp: \"smtp://m.example\", login_file: SECRET } }",
                "notifications.channels.mail.email:"
            ),
            (
                "channels: { hooks: { webhook: \"http://127.0.0.1/x\", secret_file: SECRET, ca_file: SECRET } }",
                "notifications.channels.hooks.ca_file is for an email channel only"
            ),
            (
                "channels: { mail: { email: a@b.example, smtp: \"smtps://u:p@mail.example\", login_file: SECRET } }",
                "notifications.channels.mail.smtp: the login goes in login_file, not in the URL"
            ),
            (
                "channels: { hooks: { webhook: \"http://127.0.0.1/x\", secret_file: /nonexistent/hook.secret } }",
                "notifications.channels.hooks.secret_file: cannot read /nonexistent/hook.secret"
            ),
            (
                "channels: { hooks: { webhook: \"http://127.0.0.1/x\", secret_file: OPEN } }",
                "is readable by every user"
            ),
            (
                "channels: { hooks: { webhook: \"http://user:pw@127.0.0.1/x\", secret_file: SECRET } }",
                "notifications.channels.hooks.webhook: a secret goes in its file, not in the URL"
            ),
            (
                "channels: { hooks: { webhook: \"http://127.0.0.1/x\", secret_file: SECRET } }\n  rules: [{ when: care_alert, to: [pager] }]",
                "notifications.rules[0].to: unknown channel pager"
            ),
            (
                "channels: { hooks: { webhook: \"http://127.0.0.1/x\", secret_file: SECRET } }\n  rules: [{ when: rain, to: hooks }]",
                "notifications.rules[0].when must be one of care_alert"
            ),
            (
                "channels: { hooks: { webhook: \"http://127.0.0.1/x\", secret_file: SECRET } }\n  rules: [{ when: link_down, to: hooks, quiet_hours: \"25:00-07:00\" }]",
                "notifications.rules[0].quiet_hours must be HH:MM-HH:MM"
            ),
            (
                "channels: { hooks: { webhook: \"http://127.0.0.1/x\" } }",
                "notifications.channels.hooks.secret_file must name"
            ),
            (
                "channels: { mail: { email: a@b.example, smtp: \"smtp://me:pa/ss@mail.example?x\", login_file: SECRET } }",
                "notifications.channels.mail.smtp: smtp://***@mail.example?x is not smtp://HOST[:PORT]"
            ),
            (
                "channels: { hooks: { webhook: \"http://127.0.0.1/x\", secret_file: SECRET } }\n  rules: [{ when: care_alert, to: hooks, after: 1h }]",
                "notifications.rules[0].after is for a lasting condition"
            ),
            (
                "channels: { hooks: { webhook: \"http://127.0.0.1/x\", secret_file: SECRET } }\n  rules: [{ when: sensor_silent, to: hooks, after: soon }]",
                "notifications.rules[0].after must be seconds or a span"
            ),
            (
                "channels: { hooks: { webhook: \"http://127.0.0.1/x\", secret_file: SECRET } }\n  rules: [{ when: device_offline, to: hooks, after: 9999d }]",
                "notifications.rules[0].after must be seconds or a span"
            )
        ])
    func refused(section: String, problem: String) async throws {
        let text = section.replacingOccurrences(of: "SECRET", with: try Self.secret("s"))
            .replacingOccurrences(of: "OPEN", with: try Self.secret("s", mode: 0o644))
        let file = try EffectiveConfigurationTests.file("notifications:\n  " + text + "\n")
        do {
            _ = try await EffectiveConfiguration.load(file: file, environment: [:])
            Issue.record("accepted: \(section)")
        } catch {
            #expect(error.problems.contains { $0.contains(problem) }, "\(error.problems)")
        }
    }

    /// The configuration of a file whose `notifications.channels` are `channels` (the mapping's lines, indented
    /// for it, and whatever follows).
    static func notifications(_ channels: String) async throws -> EffectiveConfiguration {
        let file = try EffectiveConfigurationTests.file("notifications:\n  channels:\n" + channels)
        return try await EffectiveConfiguration.load(file: file, environment: [:])
    }

    @Test("every trigger reads with its `after:`, shown by config check")
    func lastingRules() async throws {
        let hook = try Self.secret("hook-secret")
        let configuration = try await Self.notifications(
            """
                hooks: { webhook: "http://127.0.0.1:8123/api/webhook/plants", secret_file: \(hook) }
              rules:
                - { when: sensor_silent, to: hooks, after: 6h }
                - { when: device_offline, to: hooks }
                - { when: store_unwritable, to: hooks, after: 90 }
                - { when: link_down, to: hooks, after: 10m, hold: 2h }
                - { when: button_pressed, to: hooks }

            """)
        #expect(
            configuration.notifications.rules.map(\.after) == [
                .seconds(21_600), .seconds(3600), .seconds(90), .seconds(600), nil
            ])
        #expect(configuration.notifications.rules[3].hold == .seconds(7200))
        let report = configuration.report.joined(separator: "\n")
        #expect(report.contains("notifications.rules[0]: when sensor_silent to hooks, after 21600s, hold 3600s"))
        #expect(report.contains("notifications.rules[4]: when button_pressed to hooks, hold 3600s"))
    }

    @Test("an email channel's from, ca_file and smtps:// (465 by default) are read; config check shows them")
    func emailKeys() async throws {
        let login = try Self.secret("me\npassw0rd")
        let plan = try await Self.notifications(
            """
                mail: { email: me@example.org, smtp: "smtps://mail.example.org", login_file: \(login), from: plants@home.example, ca_file: \(login) }
                plain: { email: me@example.org, smtp: "smtp://mail.example.org:2525", login_file: \(login) }
                six: { email: me@example.org, smtp: "smtp://[::1]:2525", login_file: \(login) }

            """
        ).notifications
        #expect(
            plan.channel("mail")?.kind
                == .email(
                    to: "me@example.org", host: "mail.example.org", port: 465, from: "plants@home.example",
                    implicitTLS: true, caFile: login))
        #expect(plan.channel("plain")?.kind == .email(to: "me@example.org", host: "mail.example.org", port: 2525))
        #expect(plan.channel("six")?.kind == .email(to: "me@example.org", host: "::1", port: 2525))
        #expect(plan.channel("six")?.summary.hasPrefix("email me@example.org via smtp://[::1]:2525,") == true)
        #expect(
            plan.channel("mail")?.summary.hasPrefix(
                "email me@example.org via smtps://mail.example.org:465 from plants@home.example, CA in \(login)")
                == true)
    }

    @Test("quiet hours hold a notification to their end, across midnight and within a day")
    func quietHours() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        let night = try #require(QuietHours(parsing: "22:00-07:00"))
        let day = Date(timeIntervalSince1970: 1_795_305_600) // a midnight, UTC
        #expect(night.release(of: day + 21 * 3600, calendar: calendar) == day + 21 * 3600)
        #expect(night.release(of: day + 23 * 3600, calendar: calendar) == day + 31 * 3600)
        #expect(night.release(of: day + 3 * 3600, calendar: calendar) == day + 7 * 3600)
        let noon = try #require(QuietHours(parsing: "12:00-13:30"))
        #expect(noon.release(of: day + 12.5 * 3600, calendar: calendar) == day + 13.5 * 3600)
        #expect(QuietHours(parsing: "07:00-07:00") == nil && QuietHours(parsing: "7-9") == nil)
    }
}
