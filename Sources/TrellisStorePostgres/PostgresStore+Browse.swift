import Foundation
import PostgresNIO
import TrellisCore
import TrellisStore

/// ``BrowseStore`` over PostgreSQL: reads only, indexed lookups per entity.
///
/// Races between relays: none to settle, as nothing is written. Each call runs on one connection;
/// each statement sees what was committed when it started, as every read of this store does.
extension PostgresStore {
    /// Every top-level entity as (rank, kind, key, position), for counting and paging in SQL. Row
    /// ids are zero-padded to 20 digits so they sort as numbers among text, as in SQLite.
    static let browseRootSQL = """
        SELECT 1 AS rank, 'plant' AS kind, id::text AS key, lpad(id::text, 20, '0') AS position FROM plant
        UNION ALL SELECT 2, 'button', id, id FROM (SELECT id FROM button UNION SELECT button_id FROM registration) AS buttons
        UNION ALL SELECT 3, 'client', id, id FROM client
        UNION ALL SELECT 4, 'device', id, id FROM device
        UNION ALL SELECT 5, 'model', 'm' || id, lpad(id::text, 20, '0') FROM fleet_model
        """

    public func browseRootCount() async throws -> Int {
        let logger = self.logger
        return try await read("browseRootCount()") { connection in
            Int(
                try await connection.query(
                    "SELECT count(*) FROM (\(unescaped: Self.browseRootSQL)) AS root", logger: logger
                )
                .decode(Int64.self).gathered().first ?? 0)
        }
    }

    public func browseRoot(offset: Int, limit: Int) async throws -> [EntityRef] {
        let logger = self.logger
        return try await read("browseRoot(offset: \(offset), limit: \(limit))") { connection in
            var refs: [EntityRef] = []
            for try await (kind, key)
                in (try await connection.query(
                    """
                    SELECT kind, key FROM (\(unescaped: Self.browseRootSQL)) AS root
                    ORDER BY rank, position COLLATE "C" LIMIT \(Int64(max(0, limit))) OFFSET \(Int64(max(0, offset)))
                    """, logger: logger)).decode((String, String).self)
            {
                if let kind = EntityKind(rawValue: kind) { refs.append(EntityRef(kind, key)) }
            }
            return refs
        }
    }

    public func browseFacts(_ refs: [EntityRef], detail: Bool) async throws -> [EntityRef: BrowseFacts] {
        if !commits.buffer.isIdle { await commits.buffer.drain() }
        let logger = self.logger
        return try await read("browseFacts(\(refs.count))") { connection in
            let queries = PostgresBrowseQueries(connection: connection, logger: logger, detail: detail)
            var found: [EntityRef: BrowseFacts] = [:]
            for ref in Set(refs) {
                if let facts = try await queries.facts(ref) { found[ref] = facts }
            }
            return found
        }
    }
}

/// The queries behind ``PostgresStore/browseFacts(_:detail:)``, one method per kind, the twins of
/// the SQLite store's.
struct PostgresBrowseQueries {
    let connection: PostgresConnection
    let logger: Logger
    let detail: Bool

    func facts(_ ref: EntityRef) async throws -> BrowseFacts? {
        switch ref.kind {
        case .plant: try await plant(ref)
        case .sensor: try await sensor(ref)
        case .button: try await button(ref)
        case .client: try await client(ref)
        case .device: try await device(ref)
        case .model: try await model(ref)
        case .species: try await species(ref)
        }
    }

    private func time(_ milliseconds: Int64) -> String { ISO8601Time.format(Date(storeMilliseconds: milliseconds)) }

    private func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    private func plant(_ ref: EntityRef) async throws -> BrowseFacts? {
        guard let id = Int64(ref.key),
            let row = try await connection.query(
                """
                SELECT p.name, p.created_at, l.symbol, s.common_name FROM plant p
                LEFT JOIN catalog_plant_link l ON l.plant = p.name LEFT JOIN species s ON s.symbol = l.symbol
                WHERE p.id = \(id)
                """, logger: logger
            ).decode((String, Int64, String?, String?).self).gathered().first
        else { return nil }
        let (name, createdAt, symbol, commonName) = row
        let sensors = try await connection.query(
            "SELECT sensor FROM plant_sensor WHERE plant_id = \(id) ORDER BY position", logger: logger
        )
        .decode(String.self).gathered()
        var values = ["name": name, "created_at": time(createdAt)]
        if !sensors.isEmpty { values["sensors"] = sensors.joined(separator: ", ") }
        var children = sensors.map { EntityRef(.sensor, $0) }
        if let symbol {
            values["species"] = symbol
            values["species_name"] = commonName
            var alerts: [String] = []
            for try await (kind, sensor)
                in (try await connection.query(
                    "SELECT kind, sensor FROM catalog_alert WHERE plant = \(name) ORDER BY sensor, kind", logger: logger
                ))
                .decode((String, String).self)
            {
                alerts.append("\(kind) on \(sensor)")
            }
            values["alerts"] = alerts.isEmpty ? "none" : alerts.joined(separator: ", ")
            children.append(EntityRef(.species, symbol))
        }
        return BrowseFacts(ref: ref, values: values, children: children)
    }

    private func sensor(_ ref: EntityRef) async throws -> BrowseFacts? {
        let plants = try await connection.query(
            """
            SELECT p.name FROM plant_sensor ps JOIN plant p ON p.id = ps.plant_id WHERE ps.sensor = \(ref.key) ORDER BY p.id
            """, logger: logger
        ).decode(String.self).gathered()
        let reading = try await connection.query(
            "SELECT moisture, temperature, at FROM sensor_reading WHERE sensor = \(ref.key)", logger: logger
        )
        .decode((Int64, Double, Int64).self).gathered().first
        guard !plants.isEmpty || reading != nil else { return nil }
        var values = ["address": ref.key]
        if !plants.isEmpty { values["plants"] = plants.joined(separator: ", ") }
        if let reading {
            values["moisture"] = String(reading.0)
            values["temperature"] = number(reading.1)
            values["read_at"] = time(reading.2)
        }
        var alerts: [String] = []
        for try await (plant, kind)
            in (try await connection.query(
                "SELECT plant, kind FROM catalog_alert WHERE sensor = \(ref.key) ORDER BY plant, kind", logger: logger))
            .decode((String, String).self)
        {
            alerts.append("\(plant): \(kind)")
        }
        if !alerts.isEmpty { values["alerts"] = alerts.joined(separator: ", ") }
        return BrowseFacts(ref: ref, values: values)
    }

    private func button(_ ref: EntityRef) async throws -> BrowseFacts? {
        let total = try await connection.query("SELECT total FROM button WHERE id = \(ref.key)", logger: logger)
            .decode(Int64.self).gathered().first
        let clients = try await connection.query(
            "SELECT client_id FROM registration WHERE button_id = \(ref.key) ORDER BY client_id", logger: logger
        )
        .decode(String.self).gathered()
        guard total != nil || !clients.isEmpty else { return nil }
        var values = ["id": ref.key, "total": String(total ?? 0), "clients": String(clients.count)]
        if let last = try await connection.query(
            "SELECT max(at) FROM button_press WHERE button_id = \(ref.key)", logger: logger
        )
        .decode(Int64?.self).gathered().first ?? nil {
            values["last_press"] = time(last)
        }
        if detail {
            let history = try await connection.query(
                "SELECT at FROM button_press WHERE button_id = \(ref.key) ORDER BY at, id", logger: logger
            )
            .decode(Int64.self).gathered()
            values["history"] = history.map(time).joined(separator: ", ")
        }
        return BrowseFacts(ref: ref, values: values, children: clients.map { EntityRef(.client, $0) })
    }

    private func client(_ ref: EntityRef) async throws -> BrowseFacts? {
        guard
            let row = try await connection.query(
                "SELECT online, status_at FROM client WHERE id = \(ref.key)", logger: logger
            )
            .decode((Bool, Int64).self).gathered().first
        else { return nil }
        var registrations: [String] = []
        for try await (button, missed)
            in (try await connection.query(
                "SELECT button_id, missed FROM registration WHERE client_id = \(ref.key) ORDER BY button_id",
                logger: logger))
            .decode((String, Int64).self)
        {
            registrations.append("\(button) (missed \(missed))")
        }
        var values = [
            "id": ref.key, "status": row.0 ? "online" : "offline",
            "status_at": time(row.1), "registration_count": String(registrations.count)
        ]
        values["registrations"] = registrations.joined(separator: ", ")
        return BrowseFacts(ref: ref, values: values)
    }

    private func device(_ ref: EntityRef) async throws -> BrowseFacts? {
        guard
            let row = try await connection.query(
                """
                SELECT name, online, rssi, agent_id, agent_status, model_id FROM device WHERE id = \(ref.key)
                """, logger: logger
            ).decode((String?, Bool?, Int64?, String?, String?, Int64?).self).gathered().first
        else {
            return nil
        }
        let (name, online, rssi, agentID, agentStatus, model) = row
        var values = ["id": ref.key, "powerstate": online == true ? "online" : "offline"]
        values["name"] = name
        values["rssi"] = rssi.map { String($0) }
        values["agent_id"] = agentID
        values["agent_status"] = agentStatus
        values["model"] = model.map(ModelIdentifier.text)
        if detail {
            var entries: [String] = []
            for try await (at, type, message)
                in (try await connection.query(
                    "SELECT at, type, message FROM device_log WHERE device_id = \(ref.key) ORDER BY id DESC LIMIT 5",
                    logger: logger)).decode((Int64, String, String).self)
            {
                entries.append("\(time(at)) \(type): \(message)")
            }
            values["log"] = entries.reversed().joined(separator: "\n")
        }
        return BrowseFacts(ref: ref, values: values)
    }

    private func model(_ ref: EntityRef) async throws -> BrowseFacts? {
        guard let id = ModelIdentifier.number(ref.key),
            let row = try await connection.query(
                "SELECT name, latest_build FROM fleet_model WHERE id = \(id)", logger: logger
            )
            .decode((String, Int64).self).gathered().first
        else { return nil }
        let devices = try await connection.query(
            "SELECT id FROM device WHERE model_id = \(id) ORDER BY id", logger: logger
        ).decode(String.self).gathered()
        var values = [
            "id": ref.key, "name": row.0, "device_count": String(devices.count),
            "devices": devices.joined(separator: ", ")
        ]
        let build = row.1
        if build > 0 {
            values["latest_build"] = String(build)
            if let at = try await connection.query(
                "SELECT created_at FROM model_build WHERE model_id = \(id) AND build = \(build)", logger: logger
            )
            .decode(Int64.self).gathered().first {
                values["latest_build_at"] = time(at)
            }
        }
        return BrowseFacts(ref: ref, values: values, children: devices.map { EntityRef(.device, $0) })
    }

    /// A species is an entity of the browse service only while a plant is linked to it.
    private func species(_ ref: EntityRef) async throws -> BrowseFacts? {
        guard
            let row = try await connection.query(
                """
                SELECT symbol, common_name, scientific_name, moisture_use, shade_tolerance, min_temp_f, image_url FROM species
                WHERE symbol = \(ref.key) AND EXISTS (SELECT 1 FROM catalog_plant_link WHERE symbol = species.symbol)
                """, logger: logger
            ).decode((String, String, String, String, String, Double, String?).self).gathered().first
        else {
            return nil
        }
        var values: [String: String] = [
            "symbol": row.0, "common_name": row.1, "scientific_name": row.2,
            "moisture_use": row.3, "shade_tolerance": row.4, "min_temp_f": number(row.5)
        ]
        values["image_url"] = row.6
        return BrowseFacts(ref: ref, values: values)
    }
}
