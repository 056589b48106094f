import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import TrellisCore
import TrellisStore

/// A webhook channel: an HTTP POST of the notification as JSON, signed with the channel's secret
/// in `X-Trellis-Signature: sha256=<hex HMAC-SHA256 of the body>` (docs/notifications.md).
struct WebhookSender: NotificationSending {
    let channel: String
    let url: String
    let secret: [UInt8]
    let http: HTTPClient
    var timeout: TimeAmount = NotificationSenders.timeout

    /// The JSON body, compact with sorted keys.
    struct Body: Encodable {
        var channel: String
        var event: String
        var title: String
        var body: String
        var priority: Int
        var tags: [String]
        var created: String
    }

    func send(_ notification: OutboxNotification) async -> NotificationDelivery {
        let body = Self.body(notification)
        return await post(
            url,
            headers: [
                ("Content-Type", "application/json"), ("User-Agent", "trellis/\(TrellisVersion.current)"),
                ("X-Trellis-Signature", Self.signature(body, secret: secret))
            ], body: body, http: http, timeout: timeout)
    }

    static func body(_ notification: OutboxNotification) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let value = Body(
            channel: notification.channel, event: notification.eventKey, title: notification.title,
            body: notification.body, priority: notification.priority, tags: notification.tags,
            created: ISO8601Time.format(notification.created))
        return (try? Array(encoder.encode(value))) ?? Array("{}".utf8)
    }

    /// `sha256=` and the lowercase hex HMAC-SHA256 of `body` keyed with `secret`.
    static func signature(_ body: [UInt8], secret: [UInt8]) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: secret))
        return "sha256=" + code.map { String(format: "%02x", $0) }.joined()
    }
}

/// An ntfy channel: an HTTP POST of the message body to the topic URL with ntfy's publish headers
/// (`Title`, `Priority` 1–5, `Tags`, and `Authorization: Bearer` with a token).
struct NtfySender: NotificationSending {
    let url: String
    let token: String?
    let http: HTTPClient

    func send(_ notification: OutboxNotification) async -> NotificationDelivery {
        await post(
            url, headers: Self.headers(notification, token: token), body: Array(notification.body.utf8), http: http)
    }

    static func headers(_ notification: OutboxNotification, token: String?) -> [(String, String)] {
        var headers = [
            ("Title", HeaderText.clean(notification.title)),
            ("Priority", "\(min(max(notification.priority, 1), 5))")
        ]
        if !notification.tags.isEmpty {
            headers.append(("Tags", HeaderText.clean(notification.tags.joined(separator: ","))))
        }
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        return headers
    }
}

/// Text made safe for an HTTP header: no line breaks or other control characters, at most 250 characters.
enum HeaderText {
    static func clean(_ text: String) -> String {
        String(
            String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }).prefix(250))
    }
}
