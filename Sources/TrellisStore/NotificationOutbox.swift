import Foundation

/// The durable outbox of notifications (docs/notifications.md): a notification is kept here
/// before anything tries to send it, taken when due, and leaves the queue only once its channel
/// accepted it. Every operation is one atomic statement or transaction in the store, so relays
/// sharing a PostgreSQL store neither send one notification twice nor lose one across a restart.
public protocol NotificationOutbox: Sendable {
    /// Keeps `notification` for its channel unless the same event key was kept for that channel
    /// within `hold` before it (sent once per event). When `cancels` names an event key of the
    /// same channel still waiting unsent, that one is dropped and nothing is kept: an alert that
    /// starts and clears before its start went out sends nothing.
    /// - Returns: the queued notification's id, or nil when nothing was kept.
    func enqueueNotification(_ notification: OutboxNotification, hold: Duration, cancels: String?) async throws
        -> Int64?

    /// Takes up to `limit` notifications due at `now`, oldest due first, and leases them until
    /// `now + lease`: another taker sees them again only when the lease ends unsettled (the taker
    /// died), so nothing is lost and nothing is sent by two takers at once.
    func takeDueNotifications(now: Date, lease: Duration, limit: Int) async throws -> [QueuedNotification]

    /// Marks a notification sent at `at`: it stays only as the record of its event key for holds.
    func markNotificationSent(id: Int64, at: Date) async throws

    /// Counts a failed attempt and makes the notification due again at `retryAt`.
    func markNotificationFailed(id: Int64, reason: String, retryAt: Date) async throws

    /// How many notifications wait unsent, by channel.
    func notificationBacklog() async throws -> [String: Int]

    /// Forgets sent notifications sent before `before` (their holds are over).
    /// - Returns: how many were forgotten.
    func pruneSentNotifications(before: Date) async throws -> Int
}

/// A notification as a rule made it, before it is queued.
public struct OutboxNotification: Sendable, Hashable {
    /// The configured channel it goes through.
    public var channel: String
    /// What it is about, e.g. `care_alert:fern:dry:start`; one per event.
    public var eventKey: String
    public var title: String
    public var body: String
    /// 1 (min) to 5 (urgent), as ntfy counts.
    public var priority: Int
    /// Short words for the receiver (ntfy's tags).
    public var tags: [String]
    /// When the event happened.
    public var created: Date
    /// When it may be sent first: `created`, or the end of the rule's quiet hours.
    public var due: Date

    public init(
        channel: String, eventKey: String, title: String, body: String, priority: Int = 3, tags: [String] = [],
        created: Date, due: Date? = nil
    ) {
        (self.channel, self.eventKey, self.title, self.body) = (channel, eventKey, title, body)
        (self.priority, self.tags, self.created, self.due) = (priority, tags, created, due ?? created)
    }
}

/// A notification to keep in the outbox as part of another change's transaction (a care alert's
/// start queues its notification in the write that starts it, so a crash cannot part them): what
/// ``NotificationOutbox/enqueueNotification(_:hold:cancels:)`` takes, as one value.
public struct PendingNotification: Sendable, Hashable {
    public var notification: OutboxNotification
    public var hold: Duration
    public var cancels: String?

    public init(_ notification: OutboxNotification, hold: Duration, cancels: String? = nil) {
        (self.notification, self.hold, self.cancels) = (notification, hold, cancels)
    }
}

/// A notification taken from the outbox to be sent: what the store says of it, never changed by
/// the taker (it settles it in the store by `id`).
public struct QueuedNotification: Sendable, Hashable {
    public let id: Int64
    public let notification: OutboxNotification
    /// Failed attempts so far.
    public let attempts: Int

    public init(id: Int64, notification: OutboxNotification, attempts: Int) {
        (self.id, self.notification, self.attempts) = (id, notification, attempts)
    }
}

extension Duration {
    /// The duration in whole milliseconds, as the store keeps times.
    package var storeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}

/// How a notification's tags are kept in one column: joined by commas (a tag has none).
package enum NotificationTags {
    package static func split(_ column: String) -> [String] {
        column.split(separator: ",").map(String.init)
    }
}
