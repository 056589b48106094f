import Foundation
import PostgresNIO
import TrellisCore
import TrellisStore

/// The write-behind SQL of device logs over PostgreSQL.
///
/// The cap is kept under races: a trim first takes a transaction-scoped advisory lock on the
/// device, so two relays' batches trim one after the other, and the later one sees the earlier
/// one's committed lines as well as its own.
enum PostgresDeviceLog {
    /// Appends one entry when its device is still registered. The device row is held `FOR KEY
    /// SHARE` until commit, so a racing ``PostgresStore/deleteDevice(id:)`` (which locks the row
    /// first) either removes this line with the rest of the log or makes it be dropped.
    static func append(
        device: String, at: Int64, type: String, message: String,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO device_log (device_id, at, type, message)
            SELECT \(device), \(at), \(type), \(message)
            WHERE EXISTS (SELECT 1 FROM device WHERE id = \(device) FOR KEY SHARE)
            """, logger: logger)
    }

    /// Deletes a device's entries older than its newest `limit`.
    static func trim(device: String, keeping limit: Int, on connection: PostgresConnection, logger: Logger) async throws
    {
        try await connection.query(
            "SELECT pg_advisory_xact_lock(hashtext('device_log'), hashtext(\(device)))", logger: logger)
        try await connection.query(
            """
            DELETE FROM device_log WHERE device_id = \(device) AND id <= (
                SELECT id FROM device_log WHERE device_id = \(device) ORDER BY id DESC LIMIT 1 OFFSET \(Int64(max(0, limit))))
            """, logger: logger)
    }
}
