import Foundation
import GRDB
import TrellisStore

/// ``NotificationOutbox`` over SQLite: one table, one row per channel and event key; each
/// operation one statement or one write transaction.
extension SQLiteStore {
    public func enqueueNotification(_ notification: OutboxNotification, hold: Duration, cancels: String?) async throws
        -> Int64?
    {
        let pending = PendingNotification(notification, hold: hold, cancels: cancels)
        return try await write("enqueueNotification(channel: \(notification.channel), event: \(notification.eventKey))")
        {
            db in try Self.enqueue(pending, in: db)
        }
    }

    /// Keeps `pending` in the outbox within the caller's write transaction (see
    /// ``NotificationOutbox/enqueueNotification(_:hold:cancels:)``).
    static func enqueue(_ pending: PendingNotification, in db: Database) throws -> Int64? {
        let n = pending.notification
        let created = n.created.storeMilliseconds
        if let cancels = pending.cancels {
            try db.execute(
                sql: "DELETE FROM notification_outbox WHERE channel = ? AND event_key = ? AND sent_at IS NULL",
                arguments: [n.channel, cancels])
            if db.changesCount > 0 { return nil }
        }
        // A row of this key kept within the hold stays as it is; an older one is replaced.
        return try Int64.fetchOne(
            db,
            sql: """
                INSERT INTO notification_outbox
                    (channel, event_key, title, body, priority, tags, created_at, due_at, attempts)
                VALUES (:channel, :key, :title, :body, :priority, :tags, :created, :due, 0)
                ON CONFLICT (channel, event_key) DO UPDATE SET
                    title = excluded.title, body = excluded.body, priority = excluded.priority,
                    tags = excluded.tags, created_at = excluded.created_at, due_at = excluded.due_at,
                    attempts = 0, last_error = NULL, sent_at = NULL
                WHERE notification_outbox.created_at < :holdStart
                RETURNING id
                """,
            arguments: [
                "channel": n.channel, "key": n.eventKey, "title": n.title, "body": n.body, "priority": n.priority,
                "tags": n.tags.joined(separator: ","), "created": created, "due": n.due.storeMilliseconds,
                "holdStart": created - pending.hold.storeMilliseconds
            ])
    }

    public func takeDueNotifications(now: Date, lease: Duration, limit: Int) async throws -> [QueuedNotification] {
        let (at, until) = (now.storeMilliseconds, now.storeMilliseconds + lease.storeMilliseconds)
        return try await write("takeDueNotifications(limit: \(limit))") { db in
            try Row.fetchAll(
                db,
                sql: """
                    UPDATE notification_outbox SET due_at = ?
                    WHERE id IN (
                        SELECT id FROM notification_outbox WHERE sent_at IS NULL AND due_at <= ?
                        ORDER BY due_at, id LIMIT ?)
                    RETURNING id, channel, event_key, title, body, priority, tags, created_at, attempts
                    """, arguments: [until, at, max(0, limit)]
            ).map { row in
                QueuedNotification(
                    id: row["id"],
                    notification: OutboxNotification(
                        channel: row["channel"], eventKey: row["event_key"], title: row["title"], body: row["body"],
                        priority: row["priority"], tags: NotificationTags.split(row["tags"]),
                        created: Date(storeMilliseconds: row["created_at"]), due: Date(storeMilliseconds: until)),
                    attempts: row["attempts"])
            }.sorted { $0.id < $1.id }
        }
    }

    public func markNotificationSent(id: Int64, at: Date) async throws {
        try await write("markNotificationSent(\(id))") { db in
            try db.execute(
                sql: "UPDATE notification_outbox SET sent_at = ?, last_error = NULL WHERE id = ?",
                arguments: [at.storeMilliseconds, id])
        }
    }

    public func markNotificationFailed(id: Int64, reason: String, retryAt: Date) async throws {
        try await write("markNotificationFailed(\(id))") { db in
            try db.execute(
                sql: """
                    UPDATE notification_outbox SET attempts = attempts + 1, last_error = ?, due_at = ?
                    WHERE id = ? AND sent_at IS NULL
                    """, arguments: [reason, retryAt.storeMilliseconds, id])
        }
    }

    public func notificationBacklog() async throws -> [String: Int] {
        try await read("notificationBacklog()") { db in
            var backlog: [String: Int] = [:]
            for row in try Row.fetchAll(
                db,
                sql: "SELECT channel, COUNT(*) AS n FROM notification_outbox WHERE sent_at IS NULL GROUP BY channel")
            {
                backlog[row["channel"]] = row["n"]
            }
            return backlog
        }
    }

    public func pruneSentNotifications(before: Date) async throws -> Int {
        try await write("pruneSentNotifications()") { db in
            try db.execute(
                sql: "DELETE FROM notification_outbox WHERE sent_at IS NOT NULL AND sent_at < ?",
                arguments: [before.storeMilliseconds])
            return db.changesCount
        }
    }
}

extension StoreSchema {
    /// The outbox's table: one row per channel and event key, due ones found by `due_at`.
    static func createNotificationOutbox(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE notification_outbox (
                    id INTEGER PRIMARY KEY AUTOINCREMENT, channel TEXT NOT NULL, event_key TEXT NOT NULL,
                    title TEXT NOT NULL, body TEXT NOT NULL, priority INTEGER NOT NULL, tags TEXT NOT NULL,
                    created_at INTEGER NOT NULL, due_at INTEGER NOT NULL, attempts INTEGER NOT NULL,
                    last_error TEXT, sent_at INTEGER,
                    UNIQUE (channel, event_key)
                ) STRICT;
                CREATE INDEX notification_outbox_due ON notification_outbox(due_at) WHERE sent_at IS NULL;
                """)
    }
}
