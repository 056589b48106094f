import Foundation

/// A whole state, table by table, as plain values: what `trellis store copy` reads from one store
/// and writes into another.
///
/// Both stores have the same tables with the same columns (``PostgresSchema`` mirrors
/// ``StoreSchema``), so a copy is rows moved table by table, in an order where every row's
/// references exist before it. Only per-relay bookkeeping is left out: the delivery marks (they
/// belong to one relay's broker session), the health probe's row and the spam windows. The notification outbox is copied: what waits
/// unsent goes out from the new store, and what was sent keeps its hold there. So is each bridge's queue, ids
/// and all: what waits for an upstream broker goes from the new store, under the ids a receiver already knows; and
/// the ids each bridge's receiver carried in, so that it still drops their copies on the new store.
public struct StateDump: Sendable, Equatable {
    /// The tables copied, parents before children.
    public static let tables = [
        "plant", "plant_sensor", "sensor_reading", "reading_raw", "reading_hourly",
        "button", "button_press", "client", "registration",
        "dead_letter",
        "species", "catalog_seen", "catalog_like", "catalog_board", "catalog_board_item",
        "catalog_plant_link", "catalog_alert",
        "fleet_model", "device", "model_build", "device_log",
        "notification_outbox", "bridge_queue", "bridge_carried"
    ]

    /// Each table's key, which orders its rows in a dump.
    public static let keys: [String: String] = [
        "plant": "id", "plant_sensor": "plant_id, position", "sensor_reading": "sensor",
        "reading_raw": "id", "reading_hourly": "sensor, hour",
        "button": "id", "button_press": "id", "client": "id", "registration": "button_id, client_id",
        "dead_letter": "id",
        "species": "symbol", "catalog_seen": "client, symbol", "catalog_like": "client, symbol", "catalog_board": "id",
        "catalog_board_item": "board_id, symbol", "catalog_plant_link": "plant", "catalog_alert": "plant, sensor, kind",
        "fleet_model": "id", "device": "id", "model_build": "model_id, build", "device_log": "id",
        "notification_outbox": "id", "bridge_queue": "id",
        "bridge_carried": "id"
    ]

    /// Tables whose `id` the database assigns; a copy moves their counters past the copied ids.
    public static let generatedIDs: Set<String> = [
        "plant", "reading_raw", "button_press", "dead_letter", "catalog_board", "fleet_model", "device_log",
        "notification_outbox", "bridge_queue", "bridge_carried"
    ]

    /// One table's rows, each with a value per column, in `columns` order.
    public struct Table: Sendable, Equatable {
        public var name: String
        public var columns: [String]
        public var rows: [[DumpValue]]

        public init(name: String, columns: [String], rows: [[DumpValue]]) {
            self.name = name
            self.columns = columns
            self.rows = rows
        }
    }

    /// Every table of ``tables``, in that order.
    public var tables: [Table]

    public init(tables: [Table]) {
        self.tables = tables
    }

    /// Rows per table, for a report.
    public var rowCounts: [(table: String, rows: Int)] { tables.map { ($0.name, $0.rows.count) } }
}

/// One stored value, whatever store it came from. SQLite keeps flags as integers; PostgreSQL as
/// booleans: ``normalized`` makes the two compare equal.
public enum DumpValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
    case boolean(Bool)

    /// The value with booleans as the integers 0 and 1, so both stores' dumps compare.
    public var normalized: DumpValue {
        if case let .boolean(flag) = self { return .integer(flag ? 1 : 0) }
        return self
    }
}

/// A store whose whole state can be read as a ``StateDump``.
public protocol StateExporting: Sendable {
    /// Every row of every table of ``StateDump/tables``, each table ordered by its key.
    func exportState() async throws -> StateDump
}

/// A store that can take a whole state in one transaction.
public protocol StateImporting: StateExporting {
    /// The tables of ``StateDump/tables`` that hold rows now.
    func nonEmptyTables() async throws -> [String]
    /// Writes `dump` in one transaction; with `replacing`, every table of ``StateDump/tables`` is
    /// emptied first in the same transaction. Nothing is written when any row fails.
    func importState(_ dump: StateDump, replacing: Bool) async throws
}

/// The tables and columns a store's database has, as the database itself reports them: for the
/// schema-parity test, which fails when a table or column exists in one backend and not the other.
public protocol SchemaDescribing: Sendable {
    /// Every table of the store's schema (its own bookkeeping included) with its columns, in order.
    func schemaColumns() async throws -> [String: [String]]
}
