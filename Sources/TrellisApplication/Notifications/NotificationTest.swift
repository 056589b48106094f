import Foundation
import TrellisCore
import TrellisStore

/// `trellis notify test CHANNEL`: one notification sent straight through a configured channel,
/// not through the outbox, and what became of it in one line.
package enum NotificationTest {
    /// Sends a test notification through `channel` of `configuration`'s plan.
    /// - Throws: ``CommandFailure`` when there is no such channel, its secret cannot be used, or
    ///   the channel did not take the notification (the reason, never a secret).
    package static func run(_ configuration: EffectiveConfiguration, channel name: String, now: Date = Date())
        async throws(CommandFailure) -> String
    {
        let plan = configuration.notifications
        guard let channel = plan.channel(name) else {
            let known = plan.channels.map(\.name).sorted()
            throw fail(
                "no notification channel \(name) in \(configuration.file ?? "the configuration")"
                    + (known.isEmpty
                        ? ": add a notifications: section, see docs/notifications.md"
                        : "; the channels are \(known.joined(separator: ", "))"))
        }
        let only = NotificationPlan(channels: [channel], rules: [])
        let senders = try NotificationSenders.make(only, http: NotificationSenders.http)
        let notification = OutboxNotification(
            channel: name, eventKey: "test:\(ISO8601Time.format(now))", title: "Trellis test notification",
            body: "This is a test notification from Trellis through the channel \(name).", priority: 3,
            tags: ["test"], created: now)
        switch await senders[name]?.send(notification) ?? .failed("no sender") {
        case .sent: return "sent a test notification through \(name) (\(channel.summary))"
        case let .failed(reason): throw fail("the test notification through \(name) was not sent: \(reason)")
        }
    }
}
