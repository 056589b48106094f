import GRDB

/// The one error type every store operation throws.
///
/// It names what failed in plain words (the operation, or the path that could not be opened) and
/// keeps the underlying database or file-system error, so a log line says both what the relay was
/// doing and what the database answered.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// The broad kind of failure, for callers that react differently to each.
    public enum Code: String, Sendable, Equatable {
        /// The store directory or database file could not be created, opened or migrated.
        case cannotOpen
        /// A read or write failed inside the database.
        case operationFailed
        /// The store was used after ``SQLiteStore/close()``.
        case closed
    }

    /// What kind of failure this is.
    public let code: Code
    /// A sentence saying what failed, e.g. `recordPress(button: "b1") failed`.
    public let message: String
    /// The error reported by the database or the file system, when there was one.
    public let underlying: (any Error)?
    /// The operating system's reason behind a database failure (`No space left on device`,
    /// `Read-only file system`), when the database reported one.
    public let systemReason: String?

    /// Creates an error; prefer the static helpers, which keep messages uniform.
    public init(code: Code, message: String, underlying: (any Error)? = nil, systemReason: String? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
        self.systemReason = systemReason
    }

    /// The message followed by the underlying error, if any.
    public var description: String {
        guard let underlying else { return message }
        return "\(message): \(Self.describe(underlying))" + (systemReason.map { " (\($0))" } ?? "")
    }

    /// The kind of failure in one stable word, for counting and for logging each kind once: the
    /// name of SQLite's primary result code (`SQLITE_FULL`, `SQLITE_BUSY`, `SQLITE_READONLY`,
    /// `SQLITE_IOERR`, …), `closed` for a closed store, `other` for anything else.
    public var kind: String {
        if code == .closed { return "closed" }
        if let problem = underlying as? PostgresProblem { return problem.kind }
        if let databaseError = underlying as? DatabaseError {
            return Self.primaryCodeName(databaseError.resultCode.rawValue)
        }
        return "other"
    }

    /// The cause of a failure as a log line or health answer shows it: the kind, SQLite's words and
    /// the operating system's reason, e.g. `SQLITE_FULL: database or disk is full`.
    public var cause: String {
        guard let databaseError = underlying as? DatabaseError else {
            return underlying.map { String(describing: $0) } ?? message
        }
        let text = databaseError.message ?? "SQLite code \(databaseError.extendedResultCode.rawValue)"
        return "\(kind): \(text)" + (systemReason.map { " (\($0))" } ?? "")
    }

    /// The names of SQLite's primary result codes (https://sqlite.org/rescode.html).
    static func primaryCodeName(_ code: Int32) -> String {
        let names: [Int32: String] = [
            1: "SQLITE_ERROR", 2: "SQLITE_INTERNAL", 3: "SQLITE_PERM", 4: "SQLITE_ABORT", 5: "SQLITE_BUSY",
            6: "SQLITE_LOCKED", 7: "SQLITE_NOMEM", 8: "SQLITE_READONLY", 9: "SQLITE_INTERRUPT", 10: "SQLITE_IOERR",
            11: "SQLITE_CORRUPT", 12: "SQLITE_NOTFOUND", 13: "SQLITE_FULL", 14: "SQLITE_CANTOPEN",
            15: "SQLITE_PROTOCOL", 16: "SQLITE_EMPTY", 17: "SQLITE_SCHEMA", 18: "SQLITE_TOOBIG",
            19: "SQLITE_CONSTRAINT", 20: "SQLITE_MISMATCH", 21: "SQLITE_MISUSE", 22: "SQLITE_NOLFS",
            23: "SQLITE_AUTH", 24: "SQLITE_FORMAT", 25: "SQLITE_RANGE", 26: "SQLITE_NOTADB",
        ]
        return names[code & 0xFF] ?? "SQLITE_\(code)"
    }

    /// Whether the failure passes without anything in the request changing: the database is busy
    /// or locked, the disk is full or read-only or failing (SQLite), the server is unreachable,
    /// shutting down or starting, or a connection was lost (PostgreSQL). A message whose handling
    /// meets such a failure waits for the store instead of being refused (``OutageWaiting``).
    /// A closed store, a store that cannot be opened, a constraint, a corrupt file or a statement the
    /// server refuses are not transient.
    public var isTransient: Bool {
        guard code == .operationFailed else { return false }
        if let problem = underlying as? PostgresProblem { return problem.transient }
        if let databaseError = underlying as? DatabaseError {
            return Self.transientSQLiteCodes.contains(databaseError.resultCode.rawValue & 0xFF)
        }
        return false
    }

    /// Whether a store that could not be opened failed because its server could not be reached
    /// or was not ready yet (refused, unreachable, starting up, shutting down), which waiting
    /// may cure, rather than a refused login or a missing database, which it will not.
    public var serverUnavailable: Bool {
        code == .cannotOpen && (underlying as? PostgresProblem)?.transient == true
    }

    /// SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_IOERR and SQLITE_FULL.
    static let transientSQLiteCodes: Set<Int32> = [5, 6, 8, 10, 13]

    /// The SQLite result code of the underlying error, when it came from the database.
    public var sqliteResultCode: Int32? {
        (underlying as? DatabaseError)?.extendedResultCode.rawValue
    }

    /// An error for a store that could not be opened at `path`.
    static func cannotOpen(_ path: String, _ what: String, underlying: (any Error)?) -> StoreError {
        StoreError(code: .cannotOpen, message: "cannot \(what) at \(path)", underlying: underlying)
    }

    /// An error for an operation attempted after the store was closed.
    static func closed(_ operation: String) -> StoreError {
        StoreError(code: .closed, message: "\(operation) called on a closed store")
    }

    /// Wraps `error` as a failure of `operation`, leaving an existing ``StoreError`` untouched.
    static func wrap(_ error: any Error, operation: String, systemReason: String? = nil) -> StoreError {
        if let storeError = error as? StoreError { return storeError }
        return StoreError(code: .operationFailed, message: "\(operation) failed", underlying: error,
                          systemReason: systemReason)
    }

    /// A compact rendering of an underlying error: SQLite's message and code for database errors.
    private static func describe(_ error: any Error) -> String {
        if let databaseError = error as? DatabaseError {
            let text = databaseError.message ?? "\(databaseError.resultCode)"
            return "\(text) (SQLite code \(databaseError.extendedResultCode.rawValue))"
        }
        return String(describing: error)
    }
}
