import Foundation
import Logging
import TrellisCore
import TrellisStore

/// Turns an event into notifications in the outbox, one per channel of every rule that takes it
/// (docs/notifications.md): held past the rule's quiet hours, kept once per event key within the
/// rule's hold. Sending is the notification service's; nothing here waits on a channel.
public struct NotificationRouter: Sendable {
    public let plan: NotificationPlan
    /// Quiet hours are local time of this calendar's time zone.
    public let calendar: Calendar

    /// The longest title and body a notification carries, in characters; longer ones are cut
    /// (ntfy takes a message of 4,096 bytes; a title is one header line).
    public static let maxTitle = 250, maxBody = 4_000

    public init(plan: NotificationPlan, calendar: Calendar = .current) {
        (self.plan, self.calendar) = (plan, calendar)
    }

    /// One event to notify.
    public struct Event: Sendable, Equatable {
        public var kind: NotificationEvent
        /// Unique per event, e.g. `care_alert:Fern:dry:0x37:start`.
        public var key: String
        /// The key of the event this one undoes (a clear's start): while that waits unsent, both go.
        public var cancels: String?
        public var title: String
        public var body: String
        public var priority: Int
        public var tags: [String]

        public init(
            kind: NotificationEvent, key: String, cancels: String? = nil, title: String, body: String,
            priority: Int = 3, tags: [String] = []
        ) {
            (self.kind, self.key, self.cancels, self.title, self.body) = (kind, key, cancels, title, body)
            (self.priority, self.tags) = (priority, tags)
        }
    }

    /// The outbox entries `event`, made at `now`, becomes: one per channel of each rule taking it
    /// (of `rules`, when given).
    public func notifications(for event: Event, at now: Date, rules: [NotificationRule]? = nil)
        -> [PendingNotification]
    {
        (rules ?? plan.rules(for: event.kind)).flatMap { rule in
            rule.to.map { channel in
                let due = rule.quietHours?.release(of: now, calendar: calendar) ?? now
                return PendingNotification(
                    OutboxNotification(
                        channel: channel, eventKey: event.key, title: String(event.title.prefix(Self.maxTitle)),
                        body: String(event.body.prefix(Self.maxBody)),
                        priority: event.priority, tags: event.tags, created: now, due: due),
                    hold: rule.hold, cancels: event.cancels)
            }
        }
    }

    /// Keeps `event`'s notifications in `store`; a store failure is logged, the event is not retried.
    public func enqueue(_ event: Event, at now: Date, store: any NotificationOutbox, logger: Logger) async {
        await Self.keep(notifications(for: event, at: now), in: store, logger: logger)
    }

    /// Keeps each of `pending` in `store`, one operation each; a failure is logged.
    public static func keep(_ pending: [PendingNotification], in store: any NotificationOutbox, logger: Logger) async {
        for item in pending {
            do {
                _ = try await store.enqueueNotification(item.notification, hold: item.hold, cancels: item.cancels)
            } catch {
                logger.error(
                    "could not queue a notification",
                    metadata: [
                        "channel": "\(item.notification.channel)", "event": "\(item.notification.eventKey)",
                        "error": "\(error)"
                    ])
            }
        }
    }
}

extension NotificationRouter.Event {
    /// The events of a plant's care-alert update: each alert started or cleared (`kind:sensor`).
    public static func careAlerts(plant: String, update: CareAlertUpdate) -> [Self] {
        let started = update.started.map { key -> Self in
            let alert = update.alerts.first { "\($0.kind.rawValue):\($0.sensor)" == key }
            let detail = alert.map { " (\($0.sensor): \(Self.number($0.value)), limit \(Self.number($0.limit)))" } ?? ""
            let kind = key.split(separator: ":").first.map(String.init) ?? key
            return Self(
                kind: .careAlert, key: "care_alert:\(plant):\(key):start", title: "\(plant) is \(kind)",
                body: "\(plant) is \(kind)\(detail).", priority: 4, tags: ["seedling", kind])
        }
        let cleared = update.cleared.map { key -> Self in
            let kind = key.split(separator: ":").first.map(String.init) ?? key
            return Self(
                kind: .careAlert, key: "care_alert:\(plant):\(key):clear", cancels: "care_alert:\(plant):\(key):start",
                title: "\(plant) is no longer \(kind)", body: "\(plant) is no longer \(kind).", priority: 2,
                tags: ["seedling", "ok"])
        }
        return started + cleared
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }
}
