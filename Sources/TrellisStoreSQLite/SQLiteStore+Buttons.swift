import Foundation
import GRDB
import TrellisCore
import TrellisStore

/// ``ButtonStore`` over SQLite: every mutation is one write transaction.
extension SQLiteStore {
    public func setClientStatus(client: String, online: Bool, at: Date) async throws {
        let at = at.storeMilliseconds
        try await write("setClientStatus(client: \(client))") { db in
            try db.execute(
                sql: """
                    INSERT INTO client (id, online, status_at) VALUES (?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET online = excluded.online, status_at = excluded.status_at
                    """, arguments: [client, online, at])
        }
    }

    public func register(client: String, button: String, at: Date, maximumPerClient: Int) async throws -> Registration?
    {
        let at = at.storeMilliseconds
        return try await write("register(client: \(client), button: \(button))") { db in
            let arguments: StatementArguments = ["client": client, "button": button, "at": at]
            try db.execute(
                sql: """
                    INSERT INTO client (id, online, status_at) VALUES (:client, 1, :at)
                    ON CONFLICT (id) DO NOTHING
                    """, arguments: arguments)
            // The count read here is reset below inside the same write transaction; the value
            // written does not depend on it, so no concurrent press can be lost in between.
            let missed = try Int.fetchOne(
                db,
                sql: """
                    SELECT missed FROM registration WHERE button_id = :button AND client_id = :client
                    """, arguments: arguments)
            // A new registration counts against the cap, a renewal does not. SQLite runs one write
            // transaction at a time, so nothing registers between this count and the insert.
            if missed == nil, maximumPerClient < Int.max {
                let held =
                    try Int.fetchOne(
                        db,
                        sql: """
                            SELECT count(*) FROM registration WHERE client_id = :client
                            """, arguments: arguments) ?? 0
                if held >= maximumPerClient { return nil }
            }
            try db.execute(
                sql: """
                    INSERT INTO registration (button_id, client_id, missed, registered_at)
                    VALUES (:button, :client, 0, :at)
                    ON CONFLICT (button_id, client_id) DO UPDATE SET
                        missed = 0, registered_at = excluded.registered_at
                    """, arguments: arguments)
            return Registration(missed: missed ?? 0, button: try Self.snapshot(of: button, in: db))
        }
    }

    public func unregister(client: String, button: String) async throws -> Bool {
        try await write("unregister(client: \(client), button: \(button))") { db in
            try db.execute(
                sql: "DELETE FROM registration WHERE button_id = ? AND client_id = ?",
                arguments: [button, client])
            return db.changesCount > 0
        }
    }

    public func recordPress(
        button: String, at: Date, historyLimit: Int,
        notifying: @escaping @Sendable (ButtonState) -> [PendingNotification]
    ) async throws -> PressOutcome {
        let arguments: StatementArguments = [
            "button": button, "at": at.storeMilliseconds, "limit": max(0, historyLimit)
        ]
        return try await write("recordPress(button: \(button))") { db in
            let total = try Int.fetchOne(
                db.cachedStatement(
                    sql: """
                        INSERT INTO button (id, total) VALUES (:button, 1)
                        ON CONFLICT (id) DO UPDATE SET total = total + 1
                        RETURNING total
                        """), arguments: arguments)!
            try db.cachedStatement(
                sql: """
                    INSERT INTO button_press (button_id, at) VALUES (:button, :at)
                    """
            ).execute(arguments: arguments)
            try db.cachedStatement(
                sql: """
                    DELETE FROM button_press
                    WHERE button_id = :button AND id NOT IN (
                        SELECT id FROM button_press WHERE button_id = :button
                        ORDER BY at DESC, id DESC LIMIT :limit)
                    """
            ).execute(arguments: arguments)
            try db.cachedStatement(
                sql: """
                    UPDATE registration SET missed = missed + 1
                    WHERE button_id = :button
                      AND EXISTS (SELECT 1 FROM client c WHERE c.id = registration.client_id AND c.online = 0)
                    """
            ).execute(arguments: arguments)
            let online = try String.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT r.client_id FROM registration r JOIN client c ON c.id = r.client_id
                        WHERE r.button_id = :button AND c.online = 1
                        ORDER BY r.client_id
                        """), arguments: arguments)
            let snapshot = ButtonState(id: button, total: total, history: try Self.history(of: button, in: db))
            for pending in notifying(snapshot) { _ = try Self.enqueue(pending, in: db) }
            return PressOutcome(snapshot: snapshot, onlineClients: online)
        }
    }

    public func forgetClient(id: String) async throws {
        try await write("forgetClient(id: \(id))") { db in
            try db.execute(sql: "DELETE FROM registration WHERE client_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM client WHERE id = ?", arguments: [id])
        }
    }

    public func button(id: String) async throws -> ButtonState? {
        try await read("button(id: \(id))") { db in try Self.snapshot(of: id, in: db) }
    }

    public func buttonIDs() async throws -> [String] {
        try await read("buttonIDs()") { db in try String.fetchAll(db, sql: "SELECT id FROM button ORDER BY id") }
    }

    public func client(id: String) async throws -> ClientRecord? {
        try await read("client(id: \(id))") { db in
            guard let online = try Bool.fetchOne(db, sql: "SELECT online FROM client WHERE id = ?", arguments: [id])
            else {
                return nil
            }
            let registrations = try Row.fetchAll(
                db,
                sql: """
                    SELECT button_id, missed FROM registration WHERE client_id = ? ORDER BY button_id
                    """, arguments: [id]
            ).map { row in
                ClientRecord.ButtonRegistration(button: row["button_id"], missed: row["missed"])
            }
            return ClientRecord(id: id, online: online, registrations: registrations)
        }
    }

    /// A button's total and history, `nil` when it was never pressed.
    private static func snapshot(of button: String, in db: Database) throws -> ButtonState? {
        guard let total = try Int.fetchOne(db, sql: "SELECT total FROM button WHERE id = ?", arguments: [button]) else {
            return nil
        }
        return ButtonState(id: button, total: total, history: try history(of: button, in: db))
    }

    /// A button's kept presses, oldest first.
    private static func history(of button: String, in db: Database) throws -> [Date] {
        try Int64.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT at FROM button_press WHERE button_id = ? ORDER BY at, id
                    """), arguments: [button]
        ).map(Date.init(storeMilliseconds:))
    }
}
