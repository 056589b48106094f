import Foundation
import GRDB
import TrellisCore
import TrellisStore

/// The store's tables, created and upgraded by a `DatabaseMigrator`.
///
/// Times are integer milliseconds since 1970 (UTC). Keys and indexes are chosen for the hot
/// paths: a press touches one button row, its ~20 history rows and the registrations of that one
/// button (`registration`'s primary key starts with the button), each with its client's status
/// found by primary key.
enum StoreSchema {
    /// The migrator holding every schema version, oldest first.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", migrate: createVersion1)
        migrator.registerMigration("catalog", migrate: createCatalog)
        migrator.registerMigration("devices", migrate: createDevices)
        migrator.registerMigration("deliveries", migrate: createDeliveries)
        migrator.registerMigration("probe", migrate: createProbe)
        migrator.registerMigration("dead-letter-index", migrate: createDeadLetterIndexes)
        migrator.registerMigration("catalog-covering-indexes", migrate: createCatalogCoveringIndexes)
        migrator.registerMigration("dead-letter-client", migrate: createDeadLetterClient)
        migrator.registerMigration("bridge-queue", migrate: createBridgeQueue)
        migrator.registerMigration("reading-history", migrate: HistorySQL.createTables)
        migrator.registerMigration("notification-outbox", migrate: createNotificationOutbox)
        migrator.registerMigration("device-status-time") { db in
            // When a device's status last changed: what `device_offline` notifications measure.
            try db.execute(sql: "ALTER TABLE device ADD COLUMN status_at INTEGER")
            // A device already offline is counted as offline from the migration on.
            try db.execute(
                sql: "UPDATE device SET status_at = CAST(strftime('%s', 'now') AS INTEGER) * 1000 WHERE online = 0")
        }
        migrator.registerMigration("bridge-queue-rule", migrate: addBridgeQueueRule)
        migrator.registerMigration("bridge-carried") { try $0.execute(sql: SQLiteStore.bridgeCarriedTable) }
        migrator.registerMigration("state-identity", migrate: createStateIdentity)
        return migrator
    }

    /// Brings `writer`'s database up to the newest schema.
    static func migrate(_ writer: any DatabaseWriter) throws {
        try migrator.migrate(writer)
    }

    /// The first schema: plants, readings, buttons, clients, registrations, dead letters.
    private static func createVersion1(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE plant (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    name TEXT NOT NULL UNIQUE,
                    created_at INTEGER NOT NULL
                ) STRICT;

                CREATE TABLE plant_sensor (
                    plant_id INTEGER NOT NULL REFERENCES plant(id) ON DELETE CASCADE,
                    position INTEGER NOT NULL,
                    sensor TEXT NOT NULL,
                    PRIMARY KEY (plant_id, position),
                    UNIQUE (plant_id, sensor)
                ) WITHOUT ROWID, STRICT;
                CREATE INDEX plant_sensor_by_sensor ON plant_sensor(sensor);

                CREATE TABLE sensor_reading (
                    sensor TEXT PRIMARY KEY NOT NULL,
                    moisture INTEGER NOT NULL,
                    temperature REAL NOT NULL,
                    at INTEGER NOT NULL
                ) WITHOUT ROWID, STRICT;

                CREATE TABLE button (
                    id TEXT PRIMARY KEY NOT NULL,
                    total INTEGER NOT NULL
                ) WITHOUT ROWID, STRICT;

                CREATE TABLE button_press (
                    id INTEGER PRIMARY KEY,
                    button_id TEXT NOT NULL REFERENCES button(id) ON DELETE CASCADE,
                    at INTEGER NOT NULL
                ) STRICT;
                CREATE INDEX button_press_by_button ON button_press(button_id, at, id);

                CREATE TABLE client (
                    id TEXT PRIMARY KEY NOT NULL,
                    online INTEGER NOT NULL,
                    status_at INTEGER NOT NULL
                ) WITHOUT ROWID, STRICT;

                CREATE TABLE registration (
                    button_id TEXT NOT NULL,
                    client_id TEXT NOT NULL REFERENCES client(id) ON DELETE CASCADE,
                    missed INTEGER NOT NULL DEFAULT 0,
                    registered_at INTEGER NOT NULL,
                    PRIMARY KEY (button_id, client_id)
                ) WITHOUT ROWID, STRICT;
                CREATE INDEX registration_by_client ON registration(client_id, button_id);

                CREATE TABLE dead_letter (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    reason TEXT NOT NULL,
                    topic TEXT NOT NULL,
                    payload BLOB NOT NULL,
                    received_at INTEGER NOT NULL
                ) STRICT;
                """)
    }
}

extension StoreSchema {
    /// The plant catalog: species with indexes for every search filter (requirements, then
    /// minimum temperature; a lower-case name column), what each client was shown, likes,
    /// boards and their species, plant ↔ species links and each linked plant's active alerts.
    static func createCatalog(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE species (
                    symbol TEXT PRIMARY KEY NOT NULL,
                    scientific_name TEXT NOT NULL,
                    common_name TEXT NOT NULL,
                    moisture_use TEXT NOT NULL,
                    shade_tolerance TEXT NOT NULL,
                    min_temp_f REAL NOT NULL,
                    image_url TEXT,
                    search_name TEXT NOT NULL,
                    shuffle INTEGER NOT NULL
                ) WITHOUT ROWID, STRICT;
                CREATE INDEX species_by_needs ON species(moisture_use, shade_tolerance, min_temp_f);
                CREATE INDEX species_by_shade ON species(shade_tolerance, min_temp_f);
                CREATE INDEX species_by_min_temp ON species(min_temp_f);
                CREATE INDEX species_by_search_name ON species(search_name);

                CREATE TABLE catalog_seen (
                    client TEXT NOT NULL,
                    symbol TEXT NOT NULL,
                    PRIMARY KEY (client, symbol)
                ) WITHOUT ROWID, STRICT;

                CREATE TABLE catalog_like (
                    client TEXT NOT NULL,
                    symbol TEXT NOT NULL REFERENCES species(symbol),
                    liked_at INTEGER NOT NULL,
                    PRIMARY KEY (client, symbol)
                ) WITHOUT ROWID, STRICT;

                CREATE TABLE catalog_board (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    client TEXT NOT NULL,
                    name TEXT NOT NULL,
                    description TEXT NOT NULL,
                    public INTEGER NOT NULL,
                    created_at INTEGER NOT NULL,
                    UNIQUE (client, name)
                ) STRICT;

                CREATE TABLE catalog_board_item (
                    board_id INTEGER NOT NULL REFERENCES catalog_board(id) ON DELETE CASCADE,
                    symbol TEXT NOT NULL REFERENCES species(symbol),
                    position INTEGER NOT NULL,
                    PRIMARY KEY (board_id, symbol)
                ) WITHOUT ROWID, STRICT;

                CREATE TABLE catalog_plant_link (
                    plant TEXT PRIMARY KEY NOT NULL,
                    symbol TEXT NOT NULL REFERENCES species(symbol),
                    linked_at INTEGER NOT NULL
                ) WITHOUT ROWID, STRICT;

                CREATE TABLE catalog_alert (
                    plant TEXT NOT NULL REFERENCES catalog_plant_link(plant) ON DELETE CASCADE,
                    sensor TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    value REAL NOT NULL,
                    limit_value REAL NOT NULL,
                    since INTEGER NOT NULL,
                    PRIMARY KEY (plant, sensor, kind)
                ) WITHOUT ROWID, STRICT;
                """)
    }

    /// The marks of handled broker deliveries (see ``DeliveryStore``).
    private static func createDeliveries(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE delivery (
                    packet_id INTEGER PRIMARY KEY,
                    fingerprint INTEGER NOT NULL,
                    seq INTEGER NOT NULL
                ) STRICT;
                CREATE INDEX delivery_by_seq ON delivery(seq);
                """)
    }

    /// The one row the health probe rewrites through the write-behind path (see
    /// ``SQLiteStore/checkWritable(timeout:)``).
    private static func createProbe(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE store_probe (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    at INTEGER NOT NULL,
                    filler BLOB NOT NULL
                ) STRICT;
                """)
    }
}

extension StoreSchema {
    /// The device fleet: devices (a missing powerstate reads offline), models with a build
    /// counter, their builds, and each device's log (the newest N per device are kept).
    /// `device_log` has no foreign key: log lines are written behind, and one for a device
    /// deleted meanwhile is simply not inserted instead of failing its whole batch.
    static func createDevices(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE fleet_model (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    name TEXT NOT NULL UNIQUE,
                    latest_build INTEGER NOT NULL DEFAULT 0,
                    created_at INTEGER NOT NULL
                ) STRICT;

                CREATE TABLE device (
                    id TEXT PRIMARY KEY NOT NULL,
                    name TEXT,
                    online INTEGER,
                    rssi INTEGER,
                    agent_id TEXT,
                    agent_status TEXT,
                    model_id INTEGER REFERENCES fleet_model(id) ON DELETE SET NULL,
                    registered_at INTEGER NOT NULL
                ) WITHOUT ROWID, STRICT;
                CREATE INDEX device_by_model ON device(model_id, id);

                CREATE TABLE model_build (
                    model_id INTEGER NOT NULL REFERENCES fleet_model(id) ON DELETE CASCADE,
                    build INTEGER NOT NULL,
                    device_code TEXT NOT NULL,
                    agent_code TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    PRIMARY KEY (model_id, build)
                ) WITHOUT ROWID, STRICT;

                CREATE TABLE device_log (
                    id INTEGER PRIMARY KEY,
                    device_id TEXT NOT NULL,
                    at INTEGER NOT NULL,
                    type TEXT NOT NULL,
                    message TEXT NOT NULL
                ) STRICT;
                CREATE INDEX device_log_by_device ON device_log(device_id, id);
                """)
    }
}
