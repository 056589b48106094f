import Foundation
import PostgresNIO
import TrellisCore
import TrellisStore

/// ``ButtonStore`` over PostgreSQL: every mutation is one transaction.
///
/// A press starts by incrementing the button's total with an upsert, which locks the button's row
/// until commit: two relays pressing one button run the rest (append, trim to the newest N, count
/// missed presses, read the history) one after the other, so the history and total always agree.
/// A registration reads its missed count `FOR UPDATE` before resetting it, so a press committing
/// in between is either counted in the answer or after the reset, never lost; it holds its
/// client's row while it counts the client's registrations against the cap.
extension PostgresStore {
    public func setClientStatus(client: String, online: Bool, at: Date) async throws {
        let at = at.storeMilliseconds
        let logger = self.logger
        try await write("setClientStatus(client: \(client))") { connection in
            _ = try await connection.query(
                """
                INSERT INTO client (id, online, status_at) VALUES (\(client), \(online), \(at))
                ON CONFLICT (id) DO UPDATE SET online = excluded.online, status_at = excluded.status_at
                """, logger: logger)
        }
    }

    public func register(client: String, button: String, at: Date, maximumPerClient: Int) async throws -> Registration?
    {
        let at = at.storeMilliseconds
        let cap = Int64(clamping: maximumPerClient)
        let logger = self.logger
        return try await write("register(client: \(client), button: \(button))") { connection in
            try await connection.query(
                """
                INSERT INTO client (id, online, status_at) VALUES (\(client), true, \(at))
                ON CONFLICT (id) DO NOTHING
                """, logger: logger)
            // The client's row is held until commit: registrations of one client, on any relay,
            // count and insert one after the other, so none passes the cap.
            try await connection.query("SELECT 1 FROM client WHERE id = \(client) FOR UPDATE", logger: logger)
            let missed = try await connection.values(
                """
                SELECT missed FROM registration WHERE button_id = \(button) AND client_id = \(client) FOR UPDATE
                """, as: Int64.self, logger: logger
            ).first
            if missed == nil, cap < Int64.max {
                let held =
                    try await connection.values(
                        """
                        SELECT count(*) FROM registration WHERE client_id = \(client)
                        """, as: Int64.self, logger: logger
                    ).first ?? 0
                if held >= cap { return nil }
            }
            try await connection.query(
                """
                INSERT INTO registration (button_id, client_id, missed, registered_at)
                VALUES (\(button), \(client), 0, \(at))
                ON CONFLICT (button_id, client_id) DO UPDATE SET missed = 0, registered_at = excluded.registered_at
                """, logger: logger)
            return Registration(
                missed: Int(missed ?? 0), button: try await Self.snapshot(of: button, on: connection, logger: logger))
        }
    }

    public func unregister(client: String, button: String) async throws -> Bool {
        let logger = self.logger
        return try await write("unregister(client: \(client), button: \(button))") { connection in
            try await !connection.rows(
                """
                DELETE FROM registration WHERE button_id = \(button) AND client_id = \(client) RETURNING 1
                """, logger: logger
            ).isEmpty
        }
    }

    public func recordPress(
        button: String, at: Date, historyLimit: Int,
        notifying: @escaping @Sendable (ButtonState) -> [PendingNotification]
    ) async throws -> PressOutcome {
        let at = at.storeMilliseconds
        let limit = Int64(max(0, historyLimit))
        let logger = self.logger
        return try await write("recordPress(button: \(button))") { connection in
            let total =
                try await connection.values(
                    """
                    INSERT INTO button (id, total) VALUES (\(button), 1)
                    ON CONFLICT (id) DO UPDATE SET total = button.total + 1
                    RETURNING total
                    """, as: Int64.self, logger: logger
                ).first ?? 0
            try await connection.query(
                "INSERT INTO button_press (button_id, at) VALUES (\(button), \(at))", logger: logger)
            try await connection.query(
                """
                DELETE FROM button_press
                WHERE button_id = \(button) AND id NOT IN (
                    SELECT id FROM button_press WHERE button_id = \(button)
                    ORDER BY at DESC, id DESC LIMIT \(limit))
                """, logger: logger)
            try await connection.query(
                """
                UPDATE registration r SET missed = r.missed + 1
                FROM client c
                WHERE r.button_id = \(button) AND c.id = r.client_id AND NOT c.online
                """, logger: logger)
            var online: [String] = []
            for try await client
                in (try await connection.query(
                    """
                    SELECT r.client_id FROM registration r JOIN client c ON c.id = r.client_id
                    WHERE r.button_id = \(button) AND c.online
                    ORDER BY r.client_id
                    """, logger: logger)).decode(String.self)
            {
                online.append(client)
            }
            let history = try await Self.history(of: button, on: connection, logger: logger)
            let snapshot = ButtonState(id: button, total: Int(total), history: history)
            for pending in notifying(snapshot) { _ = try await Self.enqueue(pending, on: connection, logger: logger) }
            return PressOutcome(snapshot: snapshot, onlineClients: online)
        }
    }

    public func forgetClient(id: String) async throws {
        let logger = self.logger
        try await write("forgetClient(id: \(id))") { connection in
            try await connection.query("DELETE FROM registration WHERE client_id = \(id)", logger: logger)
            try await connection.query("DELETE FROM client WHERE id = \(id)", logger: logger)
        }
    }

    public func button(id: String) async throws -> ButtonState? {
        let logger = self.logger
        return try await read("button(id: \(id))") { connection in
            try await Self.snapshot(of: id, on: connection, logger: logger)
        }
    }

    public func buttonIDs() async throws -> [String] {
        let logger = self.logger
        return try await read("buttonIDs()") { connection in
            try await connection.values("SELECT id FROM button ORDER BY id", as: String.self, logger: logger)
        }
    }

    public func client(id: String) async throws -> ClientRecord? {
        let logger = self.logger
        return try await read("client(id: \(id))") { connection in
            guard
                let online = try await connection.values(
                    "SELECT online FROM client WHERE id = \(id)", as: Bool.self, logger: logger
                ).first
            else {
                return nil
            }
            var registrations: [ClientRecord.ButtonRegistration] = []
            for try await (button, missed)
                in (try await connection.query(
                    """
                    SELECT button_id, missed FROM registration WHERE client_id = \(id) ORDER BY button_id
                    """, logger: logger)).decode((String, Int64).self)
            {
                registrations.append(.init(button: button, missed: Int(missed)))
            }
            return ClientRecord(id: id, online: online, registrations: registrations)
        }
    }

    /// A button's total and history, `nil` when it was never pressed.
    static func snapshot(of button: String, on connection: PostgresConnection, logger: Logger) async throws
        -> ButtonState?
    {
        guard
            let total = try await connection.values(
                "SELECT total FROM button WHERE id = \(button)", as: Int64.self, logger: logger
            ).first
        else {
            return nil
        }
        return ButtonState(
            id: button, total: Int(total), history: try await history(of: button, on: connection, logger: logger))
    }

    /// A button's kept presses, oldest first.
    static func history(of button: String, on connection: PostgresConnection, logger: Logger) async throws -> [Date] {
        try await connection.values(
            "SELECT at FROM button_press WHERE button_id = \(button) ORDER BY at, id",
            as: Int64.self, logger: logger
        ).map(Date.init(storeMilliseconds:))
    }
}
