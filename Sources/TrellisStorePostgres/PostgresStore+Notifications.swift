import Foundation
import Logging
import PostgresNIO
import TrellisStore

/// ``NotificationOutbox`` over PostgreSQL: the table SQLite has, each operation one statement, so
/// relays sharing the database keep one row per event and never take one notification together
/// (`FOR UPDATE SKIP LOCKED` under the lease).
extension PostgresStore {
    public func enqueueNotification(_ notification: OutboxNotification, hold: Duration, cancels: String?) async throws
        -> Int64?
    {
        let logger = self.logger
        let pending = PendingNotification(notification, hold: hold, cancels: cancels)
        return try await write("enqueueNotification(channel: \(notification.channel), event: \(notification.eventKey))")
        {
            connection in try await Self.enqueue(pending, on: connection, logger: logger)
        }
    }

    /// Keeps `pending` in the outbox within the caller's transaction (see
    /// ``NotificationOutbox/enqueueNotification(_:hold:cancels:)``): one statement.
    static func enqueue(_ pending: PendingNotification, on connection: PostgresConnection, logger: Logger)
        async throws -> Int64?
    {
        let n = pending.notification
        let (created, due) = (n.created.storeMilliseconds, n.due.storeMilliseconds)
        let holdStart = created - pending.hold.storeMilliseconds
        let (tags, priority) = (n.tags.joined(separator: ","), Int32(n.priority))
        let cancelled = pending.cancels ?? ""
        // The start still waiting is dropped and nothing is kept; else a row of this key kept
        // within the hold stays as it is, and an older one is replaced.
        let rows = try await connection.query(
            """
            WITH cancelled AS (
                DELETE FROM notification_outbox
                WHERE \(pending.cancels != nil) AND channel = \(n.channel) AND event_key = \(cancelled)
                    AND sent_at IS NULL
                RETURNING id)
            INSERT INTO notification_outbox
                (channel, event_key, title, body, priority, tags, created_at, due_at, attempts)
            SELECT \(n.channel), \(n.eventKey), \(n.title), \(n.body), \(priority), \(tags), \(created), \(due), 0
            WHERE NOT EXISTS (SELECT 1 FROM cancelled)
            ON CONFLICT (channel, event_key) DO UPDATE SET
                title = excluded.title, body = excluded.body, priority = excluded.priority,
                tags = excluded.tags, created_at = excluded.created_at, due_at = excluded.due_at,
                attempts = 0, last_error = NULL, sent_at = NULL
            WHERE notification_outbox.created_at < \(holdStart)
            RETURNING id
            """, logger: logger)
        for try await id in rows.decode(Int64.self) { return id }
        return nil
    }

    public func takeDueNotifications(now: Date, lease: Duration, limit: Int) async throws -> [QueuedNotification] {
        let logger = self.logger
        let (at, until) = (now.storeMilliseconds, now.storeMilliseconds + lease.storeMilliseconds)
        return try await write("takeDueNotifications(limit: \(limit))") { connection in
            var taken: [QueuedNotification] = []
            for try await (id, channel, key, title, body, priority, tags, created, attempts)
                in (try await connection.query(
                    """
                    UPDATE notification_outbox SET due_at = \(until)
                    WHERE id IN (
                        SELECT id FROM notification_outbox WHERE sent_at IS NULL AND due_at <= \(at)
                        ORDER BY due_at, id LIMIT \(Int64(max(0, limit))) FOR UPDATE SKIP LOCKED)
                    RETURNING id, channel, event_key, title, body, priority, tags, created_at, attempts
                    """, logger: logger)).decode(
                    (Int64, String, String, String, String, Int32, String, Int64, Int32).self)
            {
                taken.append(
                    QueuedNotification(
                        id: id,
                        notification: OutboxNotification(
                            channel: channel, eventKey: key, title: title, body: body, priority: Int(priority),
                            tags: NotificationTags.split(tags), created: Date(storeMilliseconds: created),
                            due: Date(storeMilliseconds: until)),
                        attempts: Int(attempts)))
            }
            return taken.sorted { $0.id < $1.id }
        }
    }

    public func markNotificationSent(id: Int64, at: Date) async throws {
        let logger = self.logger
        let sentAt = at.storeMilliseconds
        try await write("markNotificationSent(\(id))") { connection in
            _ = try await connection.query(
                "UPDATE notification_outbox SET sent_at = \(sentAt), last_error = NULL WHERE id = \(id)",
                logger: logger)
        }
    }

    public func markNotificationFailed(id: Int64, reason: String, retryAt: Date) async throws {
        let logger = self.logger
        let retry = retryAt.storeMilliseconds
        try await write("markNotificationFailed(\(id))") { connection in
            _ = try await connection.query(
                """
                UPDATE notification_outbox SET attempts = attempts + 1, last_error = \(reason), due_at = \(retry)
                WHERE id = \(id) AND sent_at IS NULL
                """, logger: logger)
        }
    }

    public func notificationBacklog() async throws -> [String: Int] {
        let logger = self.logger
        return try await read("notificationBacklog()") { connection in
            var backlog: [String: Int] = [:]
            for try await (channel, count)
                in (try await connection.query(
                    "SELECT channel, COUNT(*) FROM notification_outbox WHERE sent_at IS NULL GROUP BY channel",
                    logger: logger)).decode((String, Int64).self)
            {
                backlog[channel] = Int(count)
            }
            return backlog
        }
    }

    public func pruneSentNotifications(before: Date) async throws -> Int {
        let logger = self.logger
        let limit = before.storeMilliseconds
        return try await write("pruneSentNotifications()") { connection in
            var count = 0
            for try await _
                in (try await connection.query(
                    "DELETE FROM notification_outbox WHERE sent_at IS NOT NULL AND sent_at < \(limit) RETURNING id",
                    logger: logger)).decode(Int64.self)
            {
                count += 1
            }
            return count
        }
    }

    // What `device_offline` notifications watch (``DeviceStore/offlineDevices()``).
    public func offlineDevices() async throws -> [OfflineDevice] {
        let logger = self.logger
        return try await read("offlineDevices()") { connection in
            try await connection.query(
                "SELECT id, name, status_at FROM device WHERE NOT online AND status_at IS NOT NULL ORDER BY id",
                logger: logger
            ).decode((String, String?, Int64).self).gathered().map {
                OfflineDevice(id: $0.0, name: $0.1, since: Date(storeMilliseconds: $0.2))
            }
        }
    }

    /// The outbox's table, as SQLite's.
    static let notificationOutbox = [
        """
        CREATE TABLE notification_outbox (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            channel text COLLATE "C" NOT NULL,
            event_key text COLLATE "C" NOT NULL,
            title text NOT NULL,
            body text NOT NULL,
            priority integer NOT NULL,
            tags text NOT NULL,
            created_at bigint NOT NULL,
            due_at bigint NOT NULL,
            attempts integer NOT NULL,
            last_error text,
            sent_at bigint,
            UNIQUE (channel, event_key))
        """,
        "CREATE INDEX notification_outbox_due ON notification_outbox(due_at) WHERE sent_at IS NULL"
    ]
}
