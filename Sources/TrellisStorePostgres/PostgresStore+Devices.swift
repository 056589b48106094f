import Foundation
import PostgresNIO
import TrellisCore
import TrellisStore

/// ``DeviceStore``'s registry and logs over PostgreSQL: every mutation is one transaction; log
/// lines are written behind (``PostgresDeviceLog``).
///
/// Races between relays: a message about a known device first locks its row (`FOR NO KEY
/// UPDATE`), so its changes, and whether it "changed", are decided one relay at a time, and a
/// racing delete waits. An unknown device is registered under a transaction-scoped advisory lock
/// on the registry (`device_registry`), taken only then: registrations of new devices count the
/// registry one at a time, so the cap holds, and after the lock the device is looked up again, so
/// two relays registering the same new device report `registered` once. An edit reads the model it
/// assigns `FOR KEY SHARE`, then locks the device row (the order a model delete takes them in, so
/// the two never deadlock): a racing model delete either waits or has already happened
/// (``DeviceEdit/modelNotFound``). Deleting a device locks its row first;
/// a log line's insert checks the device `FOR KEY SHARE`, so a racing batch's lines either commit
/// before the delete removes them or are dropped as lines of an unknown device.
extension PostgresStore {
    /// The advisory lock key new devices are registered under.
    static let deviceRegistryLock: Int64 = 0x6465_7669_6365_73

    public func registerDevice(id: String, maxDevices: Int, at: Date) async throws -> DeviceUpdate {
        let at = at.storeMilliseconds
        let logger = self.logger
        return try await write("registerDevice(id: \(id))") { connection in
            let (existed, inserted) = try await PostgresDeviceSQL.lockOrInsertIfRoom(
                id, at: at, maxDevices: maxDevices, on: connection, logger: logger)
            return try await PostgresDeviceSQL.update(
                id, existed: existed, changed: inserted,
                on: connection, logger: logger)
        }
    }

    public func recordDeviceStatus(id: String, powerstate: Powerstate, maxDevices: Int, at: Date) async throws
        -> DeviceUpdate
    {
        let at = at.storeMilliseconds
        let online = powerstate == .online
        let logger = self.logger
        return try await write("recordDeviceStatus(id: \(id))") { connection in
            let existed = try await PostgresDeviceSQL.lockOrLockRegistry(id, on: connection, logger: logger)
            let changed = try await connection.query(
                """
                INSERT INTO device (id, online, registered_at, status_at)
                SELECT \(id), \(online), \(at), \(at)
                WHERE \(existed) OR (SELECT count(*) FROM device) < \(Int64(maxDevices))
                ON CONFLICT (id) DO UPDATE SET online = excluded.online, status_at = excluded.status_at
                WHERE device.online IS DISTINCT FROM excluded.online
                RETURNING 1
                """, logger: logger
            ).collect()
            return try await PostgresDeviceSQL.update(
                id, existed: existed, changed: !changed.isEmpty,
                on: connection, logger: logger)
        }
    }

    public func recordTelemetry(id: String, telemetry: DeviceTelemetry, maxDevices: Int, at: Date) async throws
        -> DeviceUpdate
    {
        let at = at.storeMilliseconds
        let setRssi = telemetry.rssi != nil
        let rssi = (telemetry.rssi ?? nil).map(Int64.init)
        let setAgentID = telemetry.agentID != nil
        let agentID = telemetry.agentID ?? nil
        let setAgentStatus = telemetry.agentStatus != nil
        let agentStatus = telemetry.agentStatus ?? nil
        let logger = self.logger
        return try await write("recordTelemetry(id: \(id))") { connection in
            let (existed, inserted) = try await PostgresDeviceSQL.lockOrInsertIfRoom(
                id, at: at, maxDevices: maxDevices, on: connection, logger: logger)
            guard existed || inserted else { return DeviceUpdate(device: nil, registered: false, changed: false) }
            let updated = try await connection.query(
                """
                UPDATE device SET
                    rssi = CASE WHEN \(setRssi) THEN \(rssi)::bigint ELSE rssi END,
                    agent_id = CASE WHEN \(setAgentID) THEN \(agentID)::text ELSE agent_id END,
                    agent_status = CASE WHEN \(setAgentStatus) THEN \(agentStatus)::text ELSE agent_status END
                WHERE id = \(id) AND (
                    (\(setRssi) AND rssi IS DISTINCT FROM \(rssi)::bigint)
                    OR (\(setAgentID) AND agent_id IS DISTINCT FROM \(agentID)::text)
                    OR (\(setAgentStatus) AND agent_status IS DISTINCT FROM \(agentStatus)::text))
                RETURNING 1
                """, logger: logger
            ).collect()
            return try await PostgresDeviceSQL.update(
                id, existed: existed, changed: inserted || !updated.isEmpty,
                on: connection, logger: logger)
        }
    }

    public func device(id: String) async throws -> DeviceRecord? {
        let logger = self.logger
        return try await read("device(id: \(id))") { connection in
            try await PostgresDeviceSQL.device(id, on: connection, logger: logger)
        }
    }

    public func devices(modelID: String?, powerstate: Powerstate?) async throws -> [DeviceRecord] {
        var conditions: [String] = []
        var bindings = PostgresBindings()
        if let modelID {
            guard let number = ModelIdentifier.number(modelID) else { return [] }
            bindings.append(number)
            conditions.append("model_id = $\(bindings.count)")
        }
        switch powerstate {
        case .online?: conditions.append("online")
        case .offline?: conditions.append("(online IS NULL OR NOT online)")
        case nil: break
        }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let query = PostgresQuery(unsafeSQL: "\(PostgresDeviceSQL.selectDevice) \(filter) ORDER BY id", binds: bindings)
        let logger = self.logger
        return try await read("devices()") { connection in
            try await PostgresDeviceSQL.records(connection.query(query, logger: logger))
        }
    }

    public func updateDevice(id: String, name: String??, modelID: String??) async throws -> DeviceEdit {
        let model = DeviceModelChange(modelID)
        if model == .malformed { return try await device(id: id) == nil ? .deviceNotFound : .modelNotFound }
        let number = model.number
        let setName = name != nil
        let newName = name ?? nil
        let setModel = model.setsModel
        let logger = self.logger
        return try await write("updateDevice(id: \(id))") { connection in
            // The model first, then the device: a racing model delete locks the model, then its devices.
            var modelExists = true
            if let number {
                modelExists = try await !connection.rows(
                    "SELECT 1 FROM fleet_model WHERE id = \(number) FOR KEY SHARE", logger: logger
                ).isEmpty
            }
            guard
                let before = try await PostgresDeviceSQL.device(
                    id, lock: "FOR NO KEY UPDATE", on: connection, logger: logger)
            else {
                return .deviceNotFound
            }
            guard modelExists else { return .modelNotFound }
            try await connection.query(
                """
                UPDATE device SET
                    name = CASE WHEN \(setName) THEN \(newName)::text ELSE name END,
                    model_id = CASE WHEN \(setModel) THEN \(number)::bigint ELSE model_id END
                WHERE id = \(id)
                """, logger: logger)
            guard let after = try await PostgresDeviceSQL.device(id, on: connection, logger: logger) else {
                return .deviceNotFound
            }
            return .updated(before: before, after: after)
        }
    }

    public func deleteDevice(id: String) async throws -> DeviceRecord? {
        if !commits.buffer.isIdle { await commits.buffer.drain() }
        let logger = self.logger
        return try await write("deleteDevice(id: \(id))") { connection in
            guard
                let before = try await PostgresDeviceSQL.device(id, lock: "FOR UPDATE", on: connection, logger: logger)
            else {
                return nil
            }
            try await connection.query("DELETE FROM device_log WHERE device_id = \(id)", logger: logger)
            try await connection.query("DELETE FROM device WHERE id = \(id)", logger: logger)
            return before
        }
    }

    public func deviceLog(device: String, since: Date?, limit: Int) async throws -> [DeviceLogEntry] {
        if !commits.buffer.isIdle { await commits.buffer.drain() }
        let since = since?.storeMilliseconds ?? Int64.min
        let limit = Int64(max(0, limit))
        let logger = self.logger
        return try await read("deviceLog(device: \(device))") { connection in
            var entries: [DeviceLogEntry] = []
            for try await (at, type, message)
                in (try await connection.query(
                    """
                    SELECT at, type, message FROM (
                        SELECT id, at, type, message FROM device_log
                        WHERE device_id = \(device) AND at >= \(since) ORDER BY id DESC LIMIT \(limit)) AS newest
                    ORDER BY id
                    """, logger: logger)).decode((Int64, String, String).self)
            {
                entries.append(DeviceLogEntry(timestamp: Date(storeMilliseconds: at), type: type, message: message))
            }
            return entries
        }
    }

    public func deviceCount() async throws -> Int {
        let logger = self.logger
        return try await read("deviceCount()") { connection in
            Int(
                try await connection.query("SELECT count(*) FROM device", logger: logger)
                    .decode(Int64.self).gathered().first ?? 0)
        }
    }
}

/// The SQL the PostgreSQL device store shares between its operations.
enum PostgresDeviceSQL {
    /// Locks `id` as ``lockOrLockRegistry(_:on:logger:)`` does and, when it is unknown, registers it
    /// unless the registry holds `maxDevices` already.
    /// - Returns: whether the device was known, and whether it was inserted.
    static func lockOrInsertIfRoom(
        _ id: String, at: Int64, maxDevices: Int, on connection: PostgresConnection, logger: Logger
    ) async throws -> (existed: Bool, inserted: Bool) {
        let existed = try await lockOrLockRegistry(id, on: connection, logger: logger)
        let inserted = try await !connection.query(
            """
            INSERT INTO device (id, registered_at) SELECT \(id), \(at)
            WHERE (SELECT count(*) FROM device) < \(Int64(maxDevices)) AND NOT \(existed)
            ON CONFLICT (id) DO NOTHING
            RETURNING 1
            """, logger: logger
        ).collect().isEmpty
        return (existed, inserted)
    }

    static let selectDevice = "SELECT id, name, online, rssi, agent_id, agent_status, model_id FROM device"

    /// Locks a known device's row; for an unknown one, takes the registry lock and looks again
    /// (a racing registration of the same device may have committed meanwhile).
    /// - Returns: whether the device is known (its row is then locked).
    static func lockOrLockRegistry(_ id: String, on connection: PostgresConnection, logger: Logger) async throws -> Bool
    {
        if try await lockRow(id, on: connection, logger: logger) { return true }
        try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresStore.deviceRegistryLock))", logger: logger)
        return try await lockRow(id, on: connection, logger: logger)
    }

    private static func lockRow(_ id: String, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await !connection.query("SELECT 1 FROM device WHERE id = \(id) FOR NO KEY UPDATE", logger: logger)
            .collect().isEmpty
    }

    /// A device, optionally locked by `lock` (a row-locking clause).
    static func device(
        _ id: String, lock: String = "", on connection: PostgresConnection,
        logger: Logger
    ) async throws -> DeviceRecord? {
        try await records(
            connection.query(
                "\(unescaped: selectDevice) WHERE id = \(id) \(unescaped: lock)", logger: logger)
        ).first
    }

    /// Every row of a query selecting ``selectDevice``'s columns.
    static func records(_ rows: PostgresRowSequence) async throws -> [DeviceRecord] {
        var devices: [DeviceRecord] = []
        for try await (id, name, online, rssi, agentID, agentStatus, model)
            in rows.decode((String, String?, Bool?, Int64?, String?, String?, Int64?).self)
        {
            devices.append(
                DeviceRecord(
                    id: id, name: name, powerstate: online == true ? .online : .offline,
                    rssi: rssi.map(Int.init), agentID: agentID, agentStatus: agentStatus,
                    modelID: model.map(ModelIdentifier.text)))
        }
        return devices
    }

    /// A model with its devices, `nil` when unknown.
    static func model(_ number: Int64, on connection: PostgresConnection, logger: Logger) async throws -> ModelRecord? {
        guard
            let row = try await connection.query(
                "SELECT name, latest_build FROM fleet_model WHERE id = \(number)", logger: logger
            )
            .decode((String, Int64).self).gathered().first
        else { return nil }
        let (name, latest) = row
        let devices = try await connection.query(
            "SELECT id FROM device WHERE model_id = \(number) ORDER BY id", logger: logger
        ).decode(String.self).gathered()
        return ModelRecord(
            id: ModelIdentifier.text(number), name: name, devices: devices,
            latestBuild: latest > 0 ? Int(latest) : nil)
    }

    static func modelExists(_ number: Int64, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await connection.query("SELECT EXISTS (SELECT 1 FROM fleet_model WHERE id = \(number))", logger: logger)
            .decode(Bool.self).gathered().first ?? false
    }

    static func update(
        _ id: String, existed: Bool, changed: Bool, on connection: PostgresConnection,
        logger: Logger
    ) async throws -> DeviceUpdate {
        guard let device = try await device(id, on: connection, logger: logger) else {
            return DeviceUpdate(device: nil, registered: false, changed: false)
        }
        return DeviceUpdate(device: device, registered: !existed, changed: changed || !existed)
    }
}
