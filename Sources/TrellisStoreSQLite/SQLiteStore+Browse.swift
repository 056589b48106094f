import Foundation
import GRDB
import TrellisCore
import TrellisStore

/// ``BrowseStore`` over SQLite: one read transaction per call, indexed lookups per entity.
extension SQLiteStore {
    /// Every top-level entity as (rank, kind, key, order), for counting and paging in SQL.
    static let rootSQL = """
        SELECT 1 AS rank, 'plant' AS kind, CAST(id AS TEXT) AS key, printf('%020d', id) AS position FROM plant
        UNION ALL SELECT 2, 'button', id, id FROM (SELECT id FROM button UNION SELECT button_id FROM registration)
        UNION ALL SELECT 3, 'client', id, id FROM client
        UNION ALL SELECT 4, 'device', id, id FROM device
        UNION ALL SELECT 5, 'model', 'm' || id, printf('%020d', id) FROM fleet_model
        """

    public func browseRootCount() async throws -> Int {
        try await read("browseRootCount()") { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM (\(Self.rootSQL))") ?? 0
        }
    }

    public func browseRoot(offset: Int, limit: Int) async throws -> [EntityRef] {
        try await read("browseRoot(offset: \(offset), limit: \(limit))") { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "\(Self.rootSQL) ORDER BY rank, position LIMIT ? OFFSET ?"),
                arguments: [limit, offset]
            ).compactMap { row in
                EntityKind(rawValue: row["kind"]).map { EntityRef($0, row["key"]) }
            }
        }
    }

    public func browseFacts(_ refs: [EntityRef], detail: Bool) async throws -> [EntityRef: BrowseFacts] {
        if !buffer.isIdle { await buffer.drain() }
        return try await read("browseFacts(\(refs.count))") { db in
            let queries = BrowseQueries(db: db, detail: detail)
            var found: [EntityRef: BrowseFacts] = [:]
            for ref in Set(refs) {
                if let facts = try queries.facts(ref) { found[ref] = facts }
            }
            return found
        }
    }
}

/// The queries behind ``SQLiteStore/browseFacts(_:detail:)``, one method per kind.
struct BrowseQueries {
    let db: Database
    let detail: Bool

    func facts(_ ref: EntityRef) throws -> BrowseFacts? {
        switch ref.kind {
        case .plant: try plant(ref)
        case .sensor: try sensor(ref)
        case .button: try button(ref)
        case .client: try client(ref)
        case .device: try device(ref)
        case .model: try model(ref)
        case .species: try species(ref)
        }
    }

    private func rows(_ sql: String, _ arguments: StatementArguments) throws -> [Row] {
        try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
    }

    private func time(_ milliseconds: Int64) -> String { ISO8601Time.format(Date(storeMilliseconds: milliseconds)) }

    private func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    private func plant(_ ref: EntityRef) throws -> BrowseFacts? {
        guard let id = Int64(ref.key),
            let row = try rows(
                """
                SELECT p.name, p.created_at, l.symbol, s.common_name FROM plant p
                LEFT JOIN catalog_plant_link l ON l.plant = p.name LEFT JOIN species s ON s.symbol = l.symbol
                WHERE p.id = ?
                """, [id]
            ).first
        else { return nil }
        let name: String = row["name"]
        let sensors: [String] = try rows("SELECT sensor FROM plant_sensor WHERE plant_id = ? ORDER BY position", [id])
            .map { $0["sensor"] }
        var values = ["name": name, "created_at": time(row["created_at"])]
        if !sensors.isEmpty { values["sensors"] = sensors.joined(separator: ", ") }
        var children = sensors.map { EntityRef(.sensor, $0) }
        if let symbol: String = row["symbol"] {
            values["species"] = symbol
            values["species_name"] = row["common_name"]
            let alerts = try rows(
                "SELECT kind, sensor FROM catalog_alert WHERE plant = ? ORDER BY sensor, kind", [name]
            )
            .map { "\($0["kind"] as String) on \($0["sensor"] as String)" }
            values["alerts"] = alerts.isEmpty ? "none" : alerts.joined(separator: ", ")
            children.append(EntityRef(.species, symbol))
        }
        return BrowseFacts(ref: ref, values: values, children: children)
    }

    private func sensor(_ ref: EntityRef) throws -> BrowseFacts? {
        let plants: [String] = try rows(
            """
            SELECT p.name FROM plant_sensor ps JOIN plant p ON p.id = ps.plant_id WHERE ps.sensor = ? ORDER BY p.id
            """, [ref.key]
        ).map { $0["name"] }
        let reading = try rows("SELECT moisture, temperature, at FROM sensor_reading WHERE sensor = ?", [ref.key]).first
        guard !plants.isEmpty || reading != nil else { return nil }
        var values = ["address": ref.key]
        if !plants.isEmpty { values["plants"] = plants.joined(separator: ", ") }
        if let reading {
            values["moisture"] = String(reading["moisture"] as Int)
            values["temperature"] = number(reading["temperature"])
            values["read_at"] = time(reading["at"])
        }
        let alerts = try rows("SELECT plant, kind FROM catalog_alert WHERE sensor = ? ORDER BY plant, kind", [ref.key])
            .map { "\($0["plant"] as String): \($0["kind"] as String)" }
        if !alerts.isEmpty { values["alerts"] = alerts.joined(separator: ", ") }
        return BrowseFacts(ref: ref, values: values)
    }

    private func button(_ ref: EntityRef) throws -> BrowseFacts? {
        let total = try Int.fetchOne(
            db.cachedStatement(sql: "SELECT total FROM button WHERE id = ?"), arguments: [ref.key])
        let clients: [String] = try rows(
            "SELECT client_id FROM registration WHERE button_id = ? ORDER BY client_id", [ref.key]
        )
        .map { $0["client_id"] }
        guard total != nil || !clients.isEmpty else { return nil }
        var values = ["id": ref.key, "total": String(total ?? 0), "clients": String(clients.count)]
        if let last = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT MAX(at) FROM button_press WHERE button_id = ?"),
            arguments: [ref.key])
        {
            values["last_press"] = time(last)
        }
        if detail {
            let history: [Int64] = try rows(
                "SELECT at FROM button_press WHERE button_id = ? ORDER BY at, id", [ref.key]
            ).map { $0["at"] }
            values["history"] = history.map(time).joined(separator: ", ")
        }
        return BrowseFacts(ref: ref, values: values, children: clients.map { EntityRef(.client, $0) })
    }

    private func client(_ ref: EntityRef) throws -> BrowseFacts? {
        guard let row = try rows("SELECT online, status_at FROM client WHERE id = ?", [ref.key]).first else {
            return nil
        }
        let registrations = try rows(
            "SELECT button_id, missed FROM registration WHERE client_id = ? ORDER BY button_id", [ref.key])
        var values = [
            "id": ref.key, "status": (row["online"] as Int) == 1 ? "online" : "offline",
            "status_at": time(row["status_at"]), "registration_count": String(registrations.count)
        ]
        values["registrations"] = registrations.map { "\($0["button_id"] as String) (missed \($0["missed"] as Int))" }
            .joined(separator: ", ")
        return BrowseFacts(ref: ref, values: values)
    }

    private func device(_ ref: EntityRef) throws -> BrowseFacts? {
        guard
            let row = try rows(
                """
                SELECT name, online, rssi, agent_id, agent_status, model_id FROM device WHERE id = ?
                """, [ref.key]
            ).first
        else { return nil }
        var values = ["id": ref.key, "powerstate": (row["online"] as Int?) == 1 ? "online" : "offline"]
        values["name"] = row["name"]
        values["rssi"] = (row["rssi"] as Int?).map(String.init)
        values["agent_id"] = row["agent_id"]
        values["agent_status"] = row["agent_status"]
        values["model"] = (row["model_id"] as Int64?).map(ModelIdentifier.text)
        if detail {
            let entries = try rows(
                "SELECT at, type, message FROM device_log WHERE device_id = ? ORDER BY id DESC LIMIT 5", [ref.key])
            values["log"] = entries.reversed().map {
                "\(time($0["at"])) \($0["type"] as String): \($0["message"] as String)"
            }
            .joined(separator: "\n")
        }
        return BrowseFacts(ref: ref, values: values)
    }

    private func model(_ ref: EntityRef) throws -> BrowseFacts? {
        guard let id = ModelIdentifier.number(ref.key),
            let row = try rows("SELECT name, latest_build FROM fleet_model WHERE id = ?", [id]).first
        else { return nil }
        let devices: [String] = try rows("SELECT id FROM device WHERE model_id = ? ORDER BY id", [id]).map { $0["id"] }
        var values = [
            "id": ref.key, "name": row["name"], "device_count": String(devices.count),
            "devices": devices.joined(separator: ", ")
        ]
        let build: Int = row["latest_build"]
        if build > 0 {
            values["latest_build"] = String(build)
            if let at = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT created_at FROM model_build WHERE model_id = ? AND build = ?"),
                arguments: [id, build])
            {
                values["latest_build_at"] = time(at)
            }
        }
        return BrowseFacts(ref: ref, values: values, children: devices.map { EntityRef(.device, $0) })
    }

    /// A species is an entity of the browse service only while a plant is linked to it.
    private func species(_ ref: EntityRef) throws -> BrowseFacts? {
        guard
            let row = try rows(
                """
                SELECT symbol, common_name, scientific_name, moisture_use, shade_tolerance, min_temp_f, image_url FROM species
                WHERE symbol = ? AND EXISTS (SELECT 1 FROM catalog_plant_link WHERE symbol = species.symbol)
                """, [ref.key]
            ).first
        else { return nil }
        var values: [String: String] = [
            "symbol": row["symbol"], "common_name": row["common_name"],
            "scientific_name": row["scientific_name"], "moisture_use": row["moisture_use"],
            "shade_tolerance": row["shade_tolerance"], "min_temp_f": number(row["min_temp_f"])
        ]
        values["image_url"] = row["image_url"]
        return BrowseFacts(ref: ref, values: values)
    }
}
