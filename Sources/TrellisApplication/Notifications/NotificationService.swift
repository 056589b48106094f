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
    let plan: NotificationPlan
    let store: any NotificationOutbox
    let senders: [String: any NotificationSending]
    let logger: Logger
    /// What a taker holds a notification for before another may take it again.
    static let lease: Duration = .seconds(60)
    /// The most notifications one pass sends.
    static let perPass = 100
    /// Sent notifications are kept this long as the record their holds look at.
    static let keepSent: TimeInterval = 31 * 86_400
    private let recent = Mutex<[String: [Date]]>([:])
    private let counters: [String: (sent: Counter, failed: Counter, queued: Gauge)]

    package init(
        plan: NotificationPlan, store: any NotificationOutbox, senders: [String: any NotificationSending],
        logger: Logger
    ) {
        (self.plan, self.store, self.senders, self.logger) = (plan, store, senders, logger)
        counters = Dictionary(
            uniqueKeysWithValues: plan.channels.map { channel in
                let named = [("channel", channel.name)]
                return (
                    channel.name,
                    (
                        Counter(label: "trellis_notifications_sent_total", dimensions: named),
                        Counter(label: "trellis_notifications_failed_total", dimensions: named),
                        Gauge(label: "trellis_notifications_queued", dimensions: named)
                    )
                )
            })
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
            let backlog = try await store.notificationBacklog()
            for (name, counter) in counters { counter.queued.record(backlog[name] ?? 0) }
        } catch {
            logger.error("could not read the notification outbox: \(error)")
        }
        return outcomes
    }

    /// Sends one notification and settles it in the store.
    func deliver(_ item: QueuedNotification, now: Date) async -> NotificationDelivery {
        let channel = item.notification.channel
        guard let sender = senders[channel] else {
            // A channel no longer configured: kept, tried again after the longest wait.
            try? await store.markNotificationFailed(
                id: item.id, reason: "no channel \(channel) is configured",
                retryAt: now + TimeInterval(NotificationBackoff.longest.components.seconds))
            return .failed("no channel \(channel) is configured")
        }
        if let wait = rateLimitWait(channel, now: now) {
            try? await store.markNotificationFailed(id: item.id, reason: "rate limit", retryAt: now + wait)
            return .failed("rate limit")
        }
        let outcome = await sender.send(item.notification)
        do {
            switch outcome {
            case .sent:
                try await store.markNotificationSent(id: item.id, at: Date())
                counters[channel]?.sent.increment()
            case let .failed(reason):
                counters[channel]?.failed.increment()
                let delay = NotificationBackoff.delay(afterAttempts: item.attempts + 1)
                let retry = now + Double(delay.components.seconds)
                try await store.markNotificationFailed(id: item.id, reason: reason, retryAt: retry)
                logger.warning(
                    "a notification was not sent; it is tried again",
                    metadata: [
                        "channel": "\(channel)", "event": "\(item.notification.eventKey)", "reason": "\(reason)",
                        "attempt": "\(item.attempts + 1)", "retry_at": "\(ISO8601Time.format(retry))"
                    ])
            }
        } catch {
            logger.error(
                "could not settle a notification in the store (its lease ends and it is taken again): \(error)")
        }
        return outcome
    }

    /// Nil when `channel` may send now (the send is counted), else how long until it may.
    func rateLimitWait(_ channel: String, now: Date) -> TimeInterval? {
        let limit = plan.channel(channel)?.perMinute ?? 10
        return recent.withLock { recent in
            var times = recent[channel, default: []].filter { now.timeIntervalSince($0) < 60 }
            defer { recent[channel] = times }
            guard times.count < limit else {
                return 60 - now.timeIntervalSince(times[0])
            }
            times.append(now)
            return nil
        }
    }
}
