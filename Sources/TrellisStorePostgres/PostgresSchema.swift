import Foundation
import Logging
import PostgresNIO
import TrellisCore
import TrellisStore

/// The PostgreSQL store's tables, created and upgraded on start, versioned like the SQLite schema:
/// each migration has a name, runs once, and is recorded in `trellis_migration`.
///
/// The tables mirror ``StoreSchema``'s one for one (times are integer milliseconds since 1970,
/// flags are `boolean`, blobs `bytea`), so a state copies between the two stores table by table.
/// Two things exist only here because several relays share the database: the delivery marks are
/// kept per relay (`owner`, the relay's MQTT client id, since the broker's packet identifiers are
/// per session), and the spam limit's per-sender window is a table changed by one function call.
/// Relays starting together migrate one at a time, under a transaction-scoped advisory lock.
enum PostgresSchema {
    /// Every migration, oldest first. Append; never edit one that was released.
    static let migrations: [(name: String, statements: [String])] = [
        ("v1", statements(version1)),
        ("spam", [spamTable, admitFunction]),
        ("batching", batching),
        ("lean-admissions", leanAdmissions),
        ("dead-letter-index", deadLetterIndexes),
        ("dead-letter-client", deadLetterClient),
        ("bridge-queue", PostgresStore.bridgeQueue),
        ("reading-history", PostgresStore.readingHistory),
        ("notification-outbox", PostgresStore.notificationOutbox),
        // When a device's status last changed: what `device_offline` notifications measure.
        (
            "device-status-time",
            [
                "ALTER TABLE device ADD COLUMN status_at bigint",
                // A device already offline is counted as offline from the migration on.
                "UPDATE device SET status_at = (extract(epoch FROM now()) * 1000)::bigint WHERE NOT online"
            ]
        ),
        ("bridge-queue-rule", PostgresStore.bridgeQueueRule),
        ("bridge-carried", PostgresStore.bridgeCarried),
        ("state-identity", PostgresStore.stateIdentity)
    ]

    /// The statements of a script whose statements each end with `;` and a line break. (The
    /// extended query protocol takes one statement at a time.)
    static func statements(_ script: String) -> [String] {
        script.components(separatedBy: ";\n").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter {
            !$0.isEmpty
        }
    }

    /// The advisory lock key held while migrating (any constant shared by every relay).
    static let migrationLock: Int64 = 0x7472_656c_6c69_73

    /// The names of the migrations the database has applied, read without changing anything; nil
    /// when it holds no Trellis tables (no migration ledger).
    static func applied(_ client: PostgresClient, logger: Logger) async throws -> Set<String>? {
        let rows = try await client.query("SELECT to_regclass('trellis_migration') IS NOT NULL", logger: logger)
        var present = false
        for try await value in rows.decode(Bool.self) { present = value }
        guard present else { return nil }
        var names: Set<String> = []
        for try await name in try await client.query("SELECT name FROM trellis_migration", logger: logger)
            .decode(String.self)
        {
            names.insert(name)
        }
        return names
    }

    /// Brings the database up to the newest schema in one transaction.
    static func migrate(_ client: PostgresClient, logger: Logger) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS trellis_migration (
                    name text PRIMARY KEY,
                    applied_at timestamptz NOT NULL DEFAULT now())
                """, logger: logger)
            var applied: Set<String> = []
            for try await name in try await connection.query("SELECT name FROM trellis_migration", logger: logger)
                .decode(String.self)
            {
                applied.insert(name)
            }
            for migration in migrations where !applied.contains(migration.name) {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO trellis_migration (name) VALUES (\(migration.name))", logger: logger)
                logger.info("migrated the PostgreSQL store", metadata: ["migration": "\(migration.name)"])
            }
        }
    }

    /// Every table of the SQLite store's newest schema, plus the per-relay delivery marks. Text
    /// compares and sorts byte by byte (`COLLATE "C"`), as SQLite's does, whatever the database's locale.
    static let version1 = """
        CREATE TABLE plant (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            name text COLLATE "C" NOT NULL UNIQUE,
            created_at bigint NOT NULL);
        CREATE TABLE plant_sensor (
            plant_id bigint NOT NULL REFERENCES plant(id) ON DELETE CASCADE,
            position integer NOT NULL,
            sensor text COLLATE "C" NOT NULL,
            PRIMARY KEY (plant_id, position),
            UNIQUE (plant_id, sensor));
        CREATE INDEX plant_sensor_by_sensor ON plant_sensor(sensor);
        CREATE TABLE sensor_reading (
            sensor text COLLATE "C" PRIMARY KEY,
            moisture bigint NOT NULL,
            temperature double precision NOT NULL,
            at bigint NOT NULL);

        CREATE TABLE button (
            id text COLLATE "C" PRIMARY KEY,
            total bigint NOT NULL);
        CREATE TABLE button_press (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            button_id text COLLATE "C" NOT NULL REFERENCES button(id) ON DELETE CASCADE,
            at bigint NOT NULL);
        CREATE INDEX button_press_by_button ON button_press(button_id, at, id);
        CREATE TABLE client (
            id text COLLATE "C" PRIMARY KEY,
            online boolean NOT NULL,
            status_at bigint NOT NULL);
        CREATE TABLE registration (
            button_id text COLLATE "C" NOT NULL,
            client_id text COLLATE "C" NOT NULL REFERENCES client(id) ON DELETE CASCADE,
            missed bigint NOT NULL DEFAULT 0,
            registered_at bigint NOT NULL,
            PRIMARY KEY (button_id, client_id));
        CREATE INDEX registration_by_client ON registration(client_id, button_id);

        CREATE TABLE dead_letter (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            reason text COLLATE "C" NOT NULL,
            topic text COLLATE "C" NOT NULL,
            payload bytea NOT NULL,
            received_at bigint NOT NULL);

        CREATE TABLE species (
            symbol text COLLATE "C" PRIMARY KEY,
            scientific_name text COLLATE "C" NOT NULL,
            common_name text COLLATE "C" NOT NULL,
            moisture_use text COLLATE "C" NOT NULL,
            shade_tolerance text COLLATE "C" NOT NULL,
            min_temp_f double precision NOT NULL,
            image_url text COLLATE "C",
            search_name text COLLATE "C" NOT NULL,
            shuffle bigint NOT NULL);
        CREATE INDEX species_by_needs ON species(moisture_use, shade_tolerance, min_temp_f);
        CREATE INDEX species_by_shade ON species(shade_tolerance, min_temp_f);
        CREATE INDEX species_by_min_temp ON species(min_temp_f);
        CREATE INDEX species_by_search_name ON species(search_name text_pattern_ops);
        CREATE TABLE catalog_seen (
            client text COLLATE "C" NOT NULL,
            symbol text COLLATE "C" NOT NULL,
            PRIMARY KEY (client, symbol));
        CREATE TABLE catalog_like (
            client text COLLATE "C" NOT NULL,
            symbol text COLLATE "C" NOT NULL REFERENCES species(symbol),
            liked_at bigint NOT NULL,
            PRIMARY KEY (client, symbol));
        CREATE TABLE catalog_board (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            client text COLLATE "C" NOT NULL,
            name text COLLATE "C" NOT NULL,
            description text COLLATE "C" NOT NULL,
            public boolean NOT NULL,
            created_at bigint NOT NULL,
            UNIQUE (client, name));
        CREATE TABLE catalog_board_item (
            board_id bigint NOT NULL REFERENCES catalog_board(id) ON DELETE CASCADE,
            symbol text COLLATE "C" NOT NULL REFERENCES species(symbol),
            position bigint NOT NULL,
            PRIMARY KEY (board_id, symbol));
        CREATE TABLE catalog_plant_link (
            plant text COLLATE "C" PRIMARY KEY,
            symbol text COLLATE "C" NOT NULL REFERENCES species(symbol),
            linked_at bigint NOT NULL);
        CREATE TABLE catalog_alert (
            plant text COLLATE "C" NOT NULL REFERENCES catalog_plant_link(plant) ON DELETE CASCADE ON UPDATE CASCADE,
            sensor text COLLATE "C" NOT NULL,
            kind text COLLATE "C" NOT NULL,
            value double precision NOT NULL,
            limit_value double precision NOT NULL,
            since bigint NOT NULL,
            PRIMARY KEY (plant, sensor, kind));

        CREATE TABLE fleet_model (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            name text COLLATE "C" NOT NULL UNIQUE,
            latest_build bigint NOT NULL DEFAULT 0,
            created_at bigint NOT NULL);
        CREATE TABLE device (
            id text COLLATE "C" PRIMARY KEY,
            name text COLLATE "C",
            online boolean,
            rssi bigint,
            agent_id text COLLATE "C",
            agent_status text COLLATE "C",
            model_id bigint REFERENCES fleet_model(id) ON DELETE SET NULL,
            registered_at bigint NOT NULL);
        CREATE INDEX device_by_model ON device(model_id, id);
        CREATE TABLE model_build (
            model_id bigint NOT NULL REFERENCES fleet_model(id) ON DELETE CASCADE,
            build bigint NOT NULL,
            device_code text COLLATE "C" NOT NULL,
            agent_code text COLLATE "C" NOT NULL,
            created_at bigint NOT NULL,
            PRIMARY KEY (model_id, build));
        CREATE TABLE device_log (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            device_id text COLLATE "C" NOT NULL,
            at bigint NOT NULL,
            type text COLLATE "C" NOT NULL,
            message text COLLATE "C" NOT NULL);
        CREATE INDEX device_log_by_device ON device_log(device_id, id);

        CREATE SEQUENCE delivery_seq;
        CREATE TABLE delivery (
            owner text COLLATE "C" NOT NULL,
            packet_id integer NOT NULL,
            fingerprint bigint NOT NULL,
            seq bigint NOT NULL,
            PRIMARY KEY (owner, packet_id));
        CREATE INDEX delivery_by_seq ON delivery(owner, seq);

        CREATE TABLE store_probe (
            owner text COLLATE "C" PRIMARY KEY,
            at bigint NOT NULL,
            filler bytea NOT NULL);
        """

    /// The spam limit's sliding window per sender, shared by every relay (see ``SpamGuard``): one
    /// call of `trellis_admit` (replaced by `trellis_admit_batch`, ``batching``) locks the sender's row, drops times that left the window, and decides,
    /// so two relays admitting the same sender's messages at once count both.
    static let spamTable = """
        CREATE TABLE spam_sender (
            sender text PRIMARY KEY,
            times bigint[] NOT NULL,
            kicked boolean NOT NULL,
            allowance integer NOT NULL)
        """

    /// Admits one message (see ``spamTable``); returns `allowed`, `kicked` or `muted`.
    static let admitFunction = """
        CREATE FUNCTION trellis_admit(p_sender text, p_now bigint, p_limit integer, p_window bigint,
                                      p_use_allowance boolean) RETURNS text
        LANGUAGE plpgsql AS $$
        DECLARE
            kept bigint[];
            was_kicked boolean;
            left_over integer;
            verdict text;
        BEGIN
            INSERT INTO spam_sender (sender, times, kicked, allowance)
            VALUES (p_sender, '{}', false, 0) ON CONFLICT (sender) DO NOTHING;
            SELECT ARRAY(SELECT t FROM unnest(s.times) AS t WHERE t > p_now - p_window ORDER BY t), s.kicked, s.allowance
              INTO kept, was_kicked, left_over
              FROM spam_sender s WHERE s.sender = p_sender FOR UPDATE;
            IF p_use_allowance AND left_over > 0 AND NOT was_kicked THEN
                UPDATE spam_sender SET times = kept, allowance = left_over - 1 WHERE sender = p_sender;
                RETURN 'allowed';
            END IF;
            IF cardinality(kept) >= p_limit THEN
                verdict := CASE WHEN was_kicked THEN 'muted' ELSE 'kicked' END;
                was_kicked := true;
            ELSE
                verdict := 'allowed';
                was_kicked := false;
            END IF;
            kept := array_append(kept, p_now);
            IF cardinality(kept) > p_limit THEN
                kept := kept[cardinality(kept) - p_limit + 1 : cardinality(kept)];
            END IF;
            UPDATE spam_sender SET times = kept, kicked = was_kicked WHERE sender = p_sender;
            IF random() < 0.001 THEN
                DELETE FROM spam_sender
                WHERE sender <> p_sender AND coalesce(times[cardinality(times)], 0) <= p_now - p_window;
            END IF;
            RETURN verdict;
        END $$;
        """
}
