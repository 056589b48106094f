import Foundation
import GRDB
import Logging
import Synchronization
import TrellisCore
import TrellisStore

/// The SQLite implementation of ``TrellisStore``, through GRDB.
///
/// A store on disk uses a `DatabasePool` (WAL, `synchronous = NORMAL`, foreign keys on), so reads
/// run beside the single writer; an in-memory store, for tests and offline replay, uses a
/// `DatabaseQueue`. Each state change is one transaction whose SQL does the arithmetic
/// (increments, capped appends, conditional inserts), never a read-then-write in Swift, so the
/// same operations map one-to-one onto a shared PostgreSQL store later.
///
/// Sensor readings, device log lines, dead letters and the delivery marks that go with them are
/// written behind, in batches, by a single writer under the write-behind rule of
/// ``WriteBehindBuffer`` (a failed batch is retried, never dropped); reads that depend on them wait
/// for pending ones first. Call ``close()`` to write what is pending.
public final class SQLiteStore: TrellisStore, BufferedCommitsStore {
    /// The file name of the database inside the store directory.
    public static let fileName = "trellis.sqlite"
    /// How many dead letters a store keeps unless told otherwise.
    public static let defaultDeadLetterLimit = StoreDefaults.deadLetterLimit

    /// The database connection(s).
    let writer: any DatabaseWriter
    /// The write-behind buffer, the health of commits and the patience, shared with every store.
    package let commits: BufferedCommits
    /// Readings, log lines and dead letters waiting to be written.
    var buffer: WriteBehindBuffer<BufferedWrite> { commits.buffer }
    /// The most dead letters kept.
    let deadLetterLimit: Int
    /// Answers of frequent reads, kept until the next committed write.
    let caches = StoreReadCaches()
    /// The spam limit's windows: this store belongs to one relay, so they live in its memory.
    let spam = LocalSpamLedger()
    /// The database is in this process: a read request is handled fastest on its own.
    public var readsWaitOnServer: Bool { false }
    public var readsObservedVersions: Bool { false }

    /// Opens (creating if needed) the store in `directory`, in the file ``fileName``.
    ///
    /// - Parameters:
    ///   - deadLetterLimit: the most dead letters kept; older ones are deleted.
    ///   - logger: where failing and recovering commits are reported.
    ///   - patience: how long ``flush()`` and ``close()`` wait while commits keep failing.
    /// - Throws: ``StoreError`` with code `.cannotOpen`, naming the path, when the directory cannot
    ///   be created or the database cannot be opened or migrated. An existing file that is not a
    ///   usable database is reported and left as it is, never replaced by a fresh one.
    public convenience init(
        directory: String, deadLetterLimit: Int = SQLiteStore.defaultDeadLetterLimit,
        logger: Logger = Logger(label: "trellis.store"), patience: Duration = .seconds(4)
    ) throws {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError.cannotOpen(directory, "create the store directory", underlying: error)
        }
        let path = (directory as NSString).appendingPathComponent(Self.fileName)
        let existed = FileManager.default.fileExists(atPath: path)
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: Self.configuration())
        } catch {
            throw StoreError.cannotOpen(path, "open the database", underlying: error)
        }
        if existed { try Self.checkIntegrity(of: pool, at: path) }
        try self.init(writer: pool, path: path, deadLetterLimit: deadLetterLimit, logger: logger, patience: patience)
    }

    /// A store held in memory only, gone when closed.
    public static func inMemory(
        deadLetterLimit: Int = SQLiteStore.defaultDeadLetterLimit,
        logger: Logger = Logger(label: "trellis.store"),
        patience: Duration = .seconds(4)
    ) throws -> SQLiteStore {
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(configuration: configuration())
        } catch {
            throw StoreError.cannotOpen(":memory:", "open the database", underlying: error)
        }
        return try SQLiteStore(
            writer: queue, path: ":memory:", deadLetterLimit: deadLetterLimit,
            logger: logger, patience: patience)
    }

    private init(writer: any DatabaseWriter, path: String, deadLetterLimit: Int, logger: Logger, patience: Duration)
        throws
    {
        do {
            try StoreSchema.migrate(writer)
        } catch {
            try? writer.close()
            throw StoreError.cannotOpen(path, "migrate the database", underlying: error)
        }
        let limit = max(0, deadLetterLimit)
        self.writer = writer
        self.deadLetterLimit = limit
        let caches = caches
        let spared = SparedRecords(logger: logger)
        self.commits = BufferedCommits(health: StoreWriteHealth(logger: logger), patience: patience) { batch in
            defer { if batch.contains(where: \.changesCachedReads) { caches.invalidate() } }
            let skipped = try await Self.transaction(in: writer, operation: "writing \(batch.count) buffered rows") {
                db in try BufferedWrite.write(batch, deadLetterLimit: limit, in: db)
            }
            if let skipped { spared.skipped(skipped.count, because: "\(skipped.error)") }
        }
    }

    /// Connection settings shared by the file and in-memory stores.
    private static func configuration() -> Configuration {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(5)
        configuration.label = "TrellisStore"
        // The relay reads one request at a time; each reader connection keeps its own page cache.
        configuration.maximumReaderCount = 1
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // 1 MiB of page cache per connection (SQLite's default is 2 MiB): the operating
            // system caches the file too, and the relay's queries touch few pages.
            try db.execute(sql: "PRAGMA cache_size = -1024")
        }
        return configuration
    }

    public func checkReachable() async throws {
        try checkOpen("checkReachable()")
        do {
            _ = try await writer.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
        } catch {
            throw StoreError.wrap(error, operation: "checkReachable()")
        }
    }

    /// Writes what is queued, then closes the database. Later calls do nothing.
    /// - Throws: a failure of a queued write, or of closing the database.
    public func close() async throws {
        guard commits.beginClosing() else { return }
        let flushFailure = await commits.settleForClose()
        do {
            try writer.close()
        } catch {
            throw StoreError.wrap(error, operation: "close()")
        }
        if let flushFailure { throw flushFailure }
    }

    /// Row counts, including queued readings and dead letters while commits succeed; while they
    /// fail, the committed rows only (so statistics never wait for a failing store).
    public func counts() async throws -> StoreCounts {
        if !buffer.isIdle { await buffer.drain(untilFailure: true) }
        return try await read("counts()") { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT
                        (SELECT COUNT(*) FROM plant) AS plants,
                        (SELECT COUNT(DISTINCT sensor) FROM plant_sensor) AS sensors,
                        (SELECT COUNT(*) FROM sensor_reading) AS sensorReadings,
                        (SELECT COUNT(*) FROM button) AS buttons,
                        (SELECT COUNT(*) FROM client) AS clients,
                        (SELECT COUNT(*) FROM registration) AS registrations,
                        (SELECT COUNT(*) FROM dead_letter) AS deadLetters,
                        (SELECT COUNT(*) FROM species) AS species,
                        (SELECT COUNT(*) FROM device) AS devices,
                        (SELECT COUNT(*) FROM fleet_model) AS models,
                        (SELECT COUNT(*) FROM device_log) AS deviceLogEntries
                    """)!
            return StoreCounts(
                plants: row["plants"], sensors: row["sensors"], sensorReadings: row["sensorReadings"],
                buttons: row["buttons"], clients: row["clients"], registrations: row["registrations"],
                deadLetters: row["deadLetters"], species: row["species"],
                devices: row["devices"], models: row["models"], deviceLogEntries: row["deviceLogEntries"])
        }
    }

    /// Runs `body` in one write transaction, wrapping failures as ``StoreError``. The transaction
    /// also records the delivery bound to ``HandledDelivery/current``, if any.
    func write<T: Sendable>(_ operation: @autoclosure () -> String, _ body: @Sendable @escaping (Database) throws -> T)
        async throws -> T
    {
        let operation = operation()
        let mark = HandledDelivery.current
        defer { caches.invalidate() }
        return try await commits.direct(reportsEveryOutcome: true) {
            try checkOpen(operation)
            return try await Self.transaction(in: writer, operation: operation) { db in
                let result = try body(db)
                if let mark { try Self.record(mark, in: db) }
                return result
            }
        }
    }

    /// Runs `body` in one read transaction, wrapping failures as ``StoreError``.
    ///
    /// The read runs on GRDB's reader queue, never on the caller's thread: the relay handles
    /// messages on the MQTT network thread, which must not wait for the disk. In WAL mode a read
    /// never waits for the writer.
    func read<T: Sendable>(_ operation: @autoclosure () -> String, _ body: @Sendable @escaping (Database) throws -> T)
        async throws -> T
    {
        // The operation's name is built only when it is needed, for an error: reads are the hot path.
        try await commits.direct(reportsEveryOutcome: false) {
            try checkOpen(operation())
            do {
                return try await writer.read(body)
            } catch {
                throw StoreError.wrap(error, operation: operation())
            }
        }
    }

    /// True once ``close()`` was called.
    var isClosedNow: Bool { commits.isClosed }

    private func checkOpen(_ operation: @autoclosure () -> String) throws {
        try commits.checkOpen(operation())
    }
}

/// ``SpamLedger`` for the one relay an SQLite store belongs to: in memory.
extension SQLiteStore {
    public func admitMessage(
        sender: String, at: Date, limit: Int, window: TimeInterval,
        usingAllowance: Bool
    ) async throws -> SpamVerdict {
        spam.admit(sender: sender, at: at, limit: limit, window: window, usingAllowance: usingAllowance)
    }

    public func grantAllowance(sender: String, count: Int) async throws {
        spam.grant(sender: sender, count: count)
    }
}

/// ``StoreOperations`` for a store in this process: the spam ledger is in memory, and the read
/// cache holds the sensor records while no write waits ahead of them.
extension SQLiteStore {
    public func answerNow(_ operation: StoreOperation) -> StoreAnswer? {
        switch operation {
        case let .admitMessage(sender, at, limit, window, usingAllowance):
            return .verdict(
                spam.admit(sender: sender, at: at, limit: limit, window: window, usingAllowance: usingAllowance))
        case let .grantAllowance(sender, count):
            spam.grant(sender: sender, count: count)
            return .granted
        case let .sensorRecords(plant):
            guard buffer.isIdle else { return nil }
            return caches.sensors.lookup(plant).answer.map(StoreAnswer.sensorRecords)
        case .plants, .addPlant, .deletePlant, .renamePlant:
            return nil
        }
    }
}
