import AsyncHTTPClient
import Foundation
import Logging
import Metrics
import ServiceLifecycle
import Synchronization
import TrellisCore
import TrellisStore

/// Sends what the outbox holds (docs/notifications.md): each second it takes the due
/// notifications under a lease, sends each through its channel, and marks it sent, or failed and
/// due again after a backoff that doubles per attempt. A channel sends at most its `per_minute`;
/// the rest wait their turn in the store. A restart loses nothing: an unsettled lease ends and
/// the notification is taken again.
package final class NotificationService: Service, Sendable {
    let store: any NotificationOutbox
    let channels: NotificationChannels
    let logger: Logger
    /// What a taker holds a notification for before another may take it again.
    static let lease: Duration = .seconds(60)
    /// The most notifications one pass sends.
    static let perPass = 100
    /// Sent notifications are kept this long as the record their holds look at.
    static let keepSent: TimeInterval = 31 * 86_400

    /// Sends through `channels`, which it shares with the watch's straight sends.
    package init(store: any NotificationOutbox, channels: NotificationChannels, logger: Logger) {
        (self.store, self.channels, self.logger) = (store, channels, logger)
    }

    package convenience init(
        plan: NotificationPlan, store: any NotificationOutbox, senders: [String: any NotificationSending],
        logger: Logger
    ) {
        self.init(store: store, channels: NotificationChannels(plan: plan, senders: senders), logger: logger)
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            var passes = 0
            while !Task.isCancelled {
                await self.pass(now: Date())
                if passes % 3600 == 0 {
                    _ = try? await self.store.pruneSentNotifications(before: Date() - Self.keepSent)
                }
                passes += 1
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Takes the due notifications and sends each once; returns what became of each, by id.
    @discardableResult
    package func pass(now: Date) async -> [Int64: NotificationDelivery] {
        var outcomes: [Int64: NotificationDelivery] = [:]
        do {
            // One at a time, each under its own lease: a batch sent one after another could outlast
            // a lease (an SMTP exchange may take 30 s) and let another relay send the rest again.
            for _ in 0..<Self.perPass {
                guard let item = try await store.takeDueNotifications(now: now, lease: Self.lease, limit: 1).first
                else { break }
                outcomes[item.id] = await deliver(item, now: now)
            }
            channels.recordBacklog(try await store.notificationBacklog())
        } catch {
            logger.error("could not read the notification outbox: \(error)")
        }
        return outcomes
    }

    /// Sends one notification and settles it in the store; returns what became of the send.
    func deliver(_ item: QueuedNotification, now: Date) async -> NotificationDelivery {
        let channel = item.notification.channel
        let outcome: NotificationDelivery
        let retry: Date?
        switch await channels.send(item.notification, now: now) {
        case .sent:
            (outcome, retry) = (.sent, nil)
        case .unknownChannel:
            // A channel no longer configured: kept, tried again after the longest wait.
            outcome = .failed("no channel \(channel) is configured")
            retry = now + TimeInterval(NotificationBackoff.longest.components.seconds)
        case let .rateLimited(wait):
            (outcome, retry) = (.failed("rate limit"), now + wait)
        case let .failed(reason):
            let delay = NotificationBackoff.delay(afterAttempts: item.attempts + 1)
            let again = now + Double(delay.components.seconds)
            (outcome, retry) = (.failed(reason), again)
            logger.warning(
                "a notification was not sent; it is tried again",
                metadata: [
                    "channel": "\(channel)", "event": "\(item.notification.eventKey)", "reason": "\(reason)",
                    "attempt": "\(item.attempts + 1)", "retry_at": "\(ISO8601Time.format(again))"
                ])
        }
        do {
            switch (outcome, retry) {
            case let (.failed(reason), retry?):
                try await store.markNotificationFailed(id: item.id, reason: reason, retryAt: retry)
            default:
                try await store.markNotificationSent(id: item.id, at: Date())
            }
        } catch {
            logger.error(
                "could not settle a notification in the store (its lease ends and it is taken again): \(error)")
        }
        return outcome
    }
}
