import Foundation
import Metrics
import Synchronization
import TrellisCore
import TrellisStore

/// The configured channels, as every sender of a notification goes through them: the outbox's
/// ``NotificationService`` and the straight sends of ``NotificationWatch`` (`store_unwritable`,
/// which a store refusing writes cannot keep). Each send is held to its channel's `per_minute` and
/// counted in the channel's metrics, whichever path it took.
package final class NotificationChannels: Sendable {
    /// What became of one attempt to send.
    package enum Attempt: Sendable, Equatable {
        case sent
        /// The channel refused or could not be reached; the reason, never a secret.
        case failed(String)
        /// The channel sent its `per_minute` already: it may send again after this many seconds.
        case rateLimited(TimeInterval)
        /// No channel of that name is configured.
        case unknownChannel
    }

    package let plan: NotificationPlan
    let senders: [String: any NotificationSending]
    private let recent = Mutex<[String: [Date]]>([:])
    private let counters: [String: (sent: Counter, failed: Counter, queued: Gauge)]

    package init(plan: NotificationPlan, senders: [String: any NotificationSending]) {
        (self.plan, self.senders) = (plan, senders)
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

    /// Sends `notification` through its channel at `now`, unless the channel is unknown or at its rate.
    package func send(_ notification: OutboxNotification, now: Date) async -> Attempt {
        let channel = notification.channel
        guard let sender = senders[channel] else { return .unknownChannel }
        if let wait = rateLimitWait(channel, now: now) { return .rateLimited(wait) }
        switch await sender.send(notification) {
        case .sent:
            counters[channel]?.sent.increment()
            return .sent
        case let .failed(reason):
            counters[channel]?.failed.increment()
            return .failed(reason)
        }
    }

    /// Records each channel's notifications waiting in the outbox.
    func recordBacklog(_ backlog: [String: Int]) {
        for (name, counter) in counters { counter.queued.record(backlog[name] ?? 0) }
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
