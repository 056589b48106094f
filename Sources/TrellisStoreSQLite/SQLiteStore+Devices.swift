import Foundation
import GRDB
import TrellisCore
import TrellisStore

/// ``DeviceStore`` over SQLite: every mutation is one write transaction.
extension SQLiteStore {
    public func registerDevice(id: String, maxDevices: Int, at: Date) async throws -> DeviceUpdate {
        let arguments: StatementArguments = ["id": id, "max": maxDevices, "at": at.storeMilliseconds]
        return try await write("registerDevice(id: \(id))") { db in
            let existed = try DeviceSQL.exists(id, in: db)
            try db.cachedStatement(sql: DeviceSQL.insertIfAbsentSQL).execute(arguments: arguments)
            return try DeviceSQL.update(id, existed: existed, changed: db.changesCount > 0, in: db)
        }
    }

    public func recordDeviceStatus(id: String, powerstate: Powerstate, maxDevices: Int, at: Date) async throws
        -> DeviceUpdate
    {
        let arguments: StatementArguments = [
            "id": id, "max": maxDevices, "at": at.storeMilliseconds, "online": powerstate == .online
        ]
        return try await write("recordDeviceStatus(id: \(id))") { db in
            let existed = try DeviceSQL.exists(id, in: db)
            try db.cachedStatement(
                sql: """
                    INSERT INTO device (id, online, registered_at, status_at)
                    SELECT :id, :online, :at, :at
                    WHERE \(DeviceSQL.roomFor)
                    ON CONFLICT (id) DO UPDATE SET online = excluded.online, status_at = excluded.status_at
                    WHERE device.online IS NOT excluded.online
                    """
            ).execute(arguments: arguments)
            return try DeviceSQL.update(id, existed: existed, changed: db.changesCount > 0, in: db)
        }
    }

    public func recordTelemetry(id: String, telemetry: DeviceTelemetry, maxDevices: Int, at: Date) async throws
        -> DeviceUpdate
    {
        let arguments: StatementArguments = [
            "id": id, "max": maxDevices, "at": at.storeMilliseconds,
            "setRssi": telemetry.rssi != nil, "rssi": telemetry.rssi ?? nil,
            "setAgentID": telemetry.agentID != nil, "agentID": telemetry.agentID ?? nil,
            "setAgentStatus": telemetry.agentStatus != nil, "agentStatus": telemetry.agentStatus ?? nil
        ]
        return try await write("recordTelemetry(id: \(id))") { db in
            let existed = try DeviceSQL.exists(id, in: db)
            try db.cachedStatement(sql: DeviceSQL.insertIfAbsentSQL).execute(arguments: arguments)
            let inserted = db.changesCount > 0
            guard existed || inserted else { return DeviceUpdate(device: nil, registered: false, changed: false) }
            try db.cachedStatement(
                sql: """
                    UPDATE device SET
                        rssi = CASE WHEN :setRssi THEN :rssi ELSE rssi END,
                        agent_id = CASE WHEN :setAgentID THEN :agentID ELSE agent_id END,
                        agent_status = CASE WHEN :setAgentStatus THEN :agentStatus ELSE agent_status END
                    WHERE id = :id AND (
                        (:setRssi AND rssi IS NOT :rssi)
                        OR (:setAgentID AND agent_id IS NOT :agentID)
                        OR (:setAgentStatus AND agent_status IS NOT :agentStatus))
                    """
            ).execute(arguments: arguments)
            return try DeviceSQL.update(id, existed: existed, changed: inserted || db.changesCount > 0, in: db)
        }
    }

    public func device(id: String) async throws -> DeviceRecord? {
        let view = caches.devices.lookup(id)
        if let device = view.answer { return device }
        let device = try await read("device(id: \(id))") { db in try DeviceSQL.device(id, in: db) }
        if let device { caches.devices.keep(device, for: id, readAt: view.generation) }
        return device
    }

    public func devices(modelID: String?, powerstate: Powerstate?) async throws -> [DeviceRecord] {
        var conditions: [String] = []
        var arguments = StatementArguments()
        if let modelID {
            guard let number = ModelIdentifier.number(modelID) else { return [] }
            conditions.append("model_id = ?")
            _ = arguments.append(contentsOf: [number])
        }
        switch powerstate {
        case .online?: conditions.append("online = 1")
        case .offline?: conditions.append("(online IS NULL OR online = 0)")
        case nil: break
        }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let filterArguments = arguments
        return try await read("devices()") { db in
            try Row.fetchAll(db, sql: "\(DeviceSQL.selectDevice) \(filter) ORDER BY id", arguments: filterArguments)
                .map(DeviceSQL.record)
        }
    }

    public func updateDevice(id: String, name: String??, modelID: String??) async throws -> DeviceEdit {
        let model = DeviceModelChange(modelID)
        if model == .malformed { return try await device(id: id) == nil ? .deviceNotFound : .modelNotFound }
        let number = model.number
        let arguments: StatementArguments = [
            "id": id,
            "setName": name != nil, "name": name ?? nil,
            "setModel": model.setsModel, "model": number
        ]
        return try await write("updateDevice(id: \(id))") { db in
            guard let before = try DeviceSQL.device(id, in: db) else { return .deviceNotFound }
            if let number, try !DeviceSQL.modelExists(number, in: db) { return .modelNotFound }
            try db.cachedStatement(
                sql: """
                    UPDATE device SET
                        name = CASE WHEN :setName THEN :name ELSE name END,
                        model_id = CASE WHEN :setModel THEN :model ELSE model_id END
                    WHERE id = :id
                    """
            ).execute(arguments: arguments)
            return .updated(before: before, after: try DeviceSQL.device(id, in: db)!)
        }
    }

    public func deleteDevice(id: String) async throws -> DeviceRecord? {
        if !buffer.isIdle { await buffer.drain() }
        return try await write("deleteDevice(id: \(id))") { db in
            guard let before = try DeviceSQL.device(id, in: db) else { return nil }
            try db.execute(sql: "DELETE FROM device_log WHERE device_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM device WHERE id = ?", arguments: [id])
            return before
        }
    }

    public func deviceLog(device: String, since: Date?, limit: Int) async throws -> [DeviceLogEntry] {
        if !buffer.isIdle { await buffer.drain() }
        let arguments: StatementArguments = [device, since?.storeMilliseconds ?? Int64.min, max(0, limit)]
        return try await read("deviceLog(device: \(device))") { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT at, type, message FROM (
                            SELECT id, at, type, message FROM device_log
                            WHERE device_id = ? AND at >= ? ORDER BY id DESC LIMIT ?)
                        ORDER BY id
                        """), arguments: arguments
            ).map { row in
                DeviceLogEntry(
                    timestamp: Date(storeMilliseconds: row["at"]), type: row["type"], message: row["message"])
            }
        }
    }

    public func deviceCount() async throws -> Int {
        try await read("deviceCount()") { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM device") ?? 0 }
    }

    public func offlineDevices() async throws -> [OfflineDevice] {
        try await read("offlineDevices()") { db in
            try Row.fetchAll(
                db, sql: "SELECT id, name, status_at FROM device WHERE online = 0 AND status_at IS NOT NULL ORDER BY id"
            ).map { OfflineDevice(id: $0["id"], name: $0["name"], since: Date(storeMilliseconds: $0["status_at"])) }
        }
    }
}

/// The SQL the device store shares between its operations.
enum DeviceSQL {
    /// True for a known device, or while the registry has room for one more (`:id`, `:max`).
    /// `CASE` is evaluated lazily, so a known device never pays for the count.
    static let roomFor = """
        CASE WHEN EXISTS (SELECT 1 FROM device WHERE id = :id) THEN 1
             ELSE (SELECT COUNT(*) FROM device) < :max END
        """

    /// Registers `:id` unless known, while there is room.
    static let insertIfAbsentSQL = """
        INSERT INTO device (id, registered_at) SELECT :id, :at WHERE \(roomFor)
        ON CONFLICT (id) DO NOTHING
        """

    static let selectDevice = "SELECT id, name, online, rssi, agent_id, agent_status, model_id FROM device"

    static func exists(_ id: String, in db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM device WHERE id = ?)"), arguments: [id])
            ?? false
    }

    static func modelExists(_ number: Int64, in db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM fleet_model WHERE id = ?)", arguments: [number])
            ?? false
    }

    static func device(_ id: String, in db: Database) throws -> DeviceRecord? {
        try Row.fetchOne(db.cachedStatement(sql: "\(selectDevice) WHERE id = ?"), arguments: [id]).map(record)
    }

    static func record(_ row: Row) -> DeviceRecord {
        let online: Bool? = row["online"]
        let model: Int64? = row["model_id"]
        return DeviceRecord(
            id: row["id"], name: row["name"], powerstate: online == true ? .online : .offline,
            rssi: row["rssi"], agentID: row["agent_id"], agentStatus: row["agent_status"],
            modelID: model.map(ModelIdentifier.text))
    }

    static func model(_ number: Int64, in db: Database) throws -> ModelRecord? {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT name, latest_build FROM fleet_model WHERE id = ?", arguments: [number])
        else {
            return nil
        }
        let devices = try String.fetchAll(
            db, sql: "SELECT id FROM device WHERE model_id = ? ORDER BY id", arguments: [number])
        let latest: Int = row["latest_build"]
        return ModelRecord(
            id: ModelIdentifier.text(number), name: row["name"], devices: devices,
            latestBuild: latest > 0 ? latest : nil)
    }

    static func update(_ id: String, existed: Bool, changed: Bool, in db: Database) throws -> DeviceUpdate {
        guard let device = try device(id, in: db) else {
            return DeviceUpdate(device: nil, registered: false, changed: false)
        }
        return DeviceUpdate(device: device, registered: !existed, changed: changed || !existed)
    }
}

/// The write-behind SQL of device logs.
enum DeviceLogSQL {
    /// Appends one entry when its device is still registered.
    static func append(device: String, at: Int64, type: String, message: String, in db: Database) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO device_log (device_id, at, type, message)
                SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM device WHERE id = ?)
                """
        ).execute(arguments: [device, at, type, message, device])
    }

    /// Deletes a device's entries older than its newest `limit`.
    static func trim(device: String, keeping limit: Int, in db: Database) throws {
        try db.cachedStatement(
            sql: """
                DELETE FROM device_log WHERE device_id = ? AND id <= (
                    SELECT id FROM device_log WHERE device_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)
                """
        ).execute(arguments: [device, device, limit])
    }
}
