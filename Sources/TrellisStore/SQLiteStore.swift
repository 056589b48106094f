import Foundation
import GRDB
import Synchronization

/// The SQLite implementation of ``TrellisStore``, through GRDB.
///
/// A store on disk uses a `DatabasePool` (WAL, `synchronous = NORMAL`, foreign keys on), so reads
/// run beside the single writer; an in-memory store, for tests and offline replay, uses a
/// `DatabaseQueue`. Each state change is one transaction whose SQL does the arithmetic
/// (increments, capped appends, conditional inserts), never a read-then-write in Swift, so the
/// same operations map one-to-one onto a shared PostgreSQL store later.
///
/// Sensor readings and dead letters are written behind, in batches, by a single writer; reads
/// that depend on them wait for pending ones first. Call ``close()`` to write what is pending.
public final class SQLiteStore: TrellisStore {
    /// The file name of the database inside the store directory.
    public static let fileName = "trellis.sqlite"
    /// How many dead letters a store keeps unless told otherwise.
    public static let defaultDeadLetterLimit = 10_000

    /// The database connection(s).
    let writer: any DatabaseWriter
    /// Readings and dead letters waiting to be written.
    let buffer: WriteBehindBuffer<BufferedWrite>
    /// The most dead letters kept.
    let deadLetterLimit: Int
    /// Answers of frequent reads, kept until the next committed write.
    let caches = StoreReadCaches()
    private let isClosed = Mutex(false)

    /// Opens (creating if needed) the store in `directory`, in the file ``fileName``.
    ///
    /// - Parameter deadLetterLimit: the most dead letters kept; older ones are deleted.
    /// - Throws: ``StoreError`` with code `.cannotOpen`, naming the path, when the directory cannot
    ///   be created or the database cannot be opened or migrated.
    public convenience init(directory: String, deadLetterLimit: Int = SQLiteStore.defaultDeadLetterLimit) throws {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError.cannotOpen(directory, "create the store directory", underlying: error)
        }
        let path = (directory as NSString).appendingPathComponent(Self.fileName)
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: Self.configuration())
        } catch {
            throw StoreError.cannotOpen(path, "open the database", underlying: error)
        }
        try self.init(writer: pool, path: path, deadLetterLimit: deadLetterLimit)
    }

    /// A store held in memory only, gone when closed.
    public static func inMemory(deadLetterLimit: Int = SQLiteStore.defaultDeadLetterLimit) throws -> SQLiteStore {
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(configuration: configuration())
        } catch {
            throw StoreError.cannotOpen(":memory:", "open the database", underlying: error)
        }
        return try SQLiteStore(writer: queue, path: ":memory:", deadLetterLimit: deadLetterLimit)
    }

    private init(writer: any DatabaseWriter, path: String, deadLetterLimit: Int) throws {
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
        self.buffer = WriteBehindBuffer { batch in
            defer { caches.invalidate() }
            do {
                try await writer.write { db in try BufferedWrite.write(batch, deadLetterLimit: limit, in: db) }
            } catch {
                throw StoreError.wrap(error, operation: "writing \(batch.count) buffered rows")
            }
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

    /// Writes every queued reading and dead letter and waits for them.
    /// - Throws: the first failure of a queued write since the previous flush.
    public func flush() async throws {
        try checkOpen("flush()")
        try await buffer.flush()
    }

    /// Writes what is queued, then closes the database. Later calls do nothing.
    /// - Throws: a failure of a queued write, or of closing the database.
    public func close() async throws {
        let wasClosed = isClosed.withLock { closed in
            defer { closed = true }
            return closed
        }
        guard !wasClosed else { return }
        var flushFailure: (any Error)?
        do { try await buffer.flush() } catch { flushFailure = error }
        do {
            try writer.close()
        } catch {
            throw StoreError.wrap(error, operation: "close()")
        }
        if let flushFailure { throw flushFailure }
    }

    /// Row counts, including queued readings and dead letters.
    public func counts() async throws -> StoreCounts {
        if !buffer.isIdle { await buffer.drain() }
        return try await read("counts()") { db in
            let row = try Row.fetchOne(db, sql: """
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
    func write<T: Sendable>(_ operation: @autoclosure () -> String, _ body: @Sendable @escaping (Database) throws -> T) async throws -> T {
        try checkOpen(operation())
        let mark = HandledDelivery.current
        defer { caches.invalidate() }
        do {
            return try await writer.write { db in
                let result = try body(db)
                if let mark { try Self.record(mark, in: db) }
                return result
            }
        } catch {
            throw StoreError.wrap(error, operation: operation())
        }
    }

    /// Runs `body` in one read transaction, wrapping failures as ``StoreError``.
    ///
    /// The read runs on GRDB's reader queue, never on the caller's thread: the relay handles
    /// messages on the MQTT network thread, which must not wait for the disk. In WAL mode a read
    /// never waits for the writer.
    func read<T: Sendable>(_ operation: @autoclosure () -> String, _ body: @Sendable @escaping (Database) throws -> T) async throws -> T {
        try checkOpen(operation())
        do {
            return try await writer.read(body)
        } catch {
            throw StoreError.wrap(error, operation: operation())
        }
    }

    /// Queues a fire-and-forget write; one made while a delivery is in hand carries its mark, so
    /// both land in the same batch transaction.
    func enqueue(_ operation: @autoclosure () -> String, _ item: BufferedWrite) async throws {
        try checkOpen(operation())
        if let mark = HandledDelivery.current {
            await buffer.append(.marked(item, mark))
        } else {
            await buffer.append(item)
        }
    }

    private func checkOpen(_ operation: @autoclosure () -> String) throws {
        if isClosed.withLock({ $0 }) { throw StoreError.closed(operation()) }
    }
}
