import GRDB
import TrellisCore
import TrellisStore

/// SQLite's errors, classified for ``StoreError``: their kind is the name of SQLite's primary result
/// code, and a busy, locked, read-only, failing or full database is a failure that passes.
extension DatabaseError: StoreFailureCause {
    public var kind: String { Self.primaryCodeName(resultCode.rawValue) }

    public var summary: String {
        "\(message ?? "\(resultCode)") (SQLite code \(extendedResultCode.rawValue))"
    }

    public var causeText: String {
        "\(kind): \(message ?? "SQLite code \(extendedResultCode.rawValue)")"
    }

    /// SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_IOERR and SQLITE_FULL.
    public var isTransient: Bool { Self.transientCodes.contains(resultCode.rawValue & 0xFF) }

    /// A file, not a server: never unavailable in that sense.
    public var isServerUnavailable: Bool { false }

    static let transientCodes: Set<Int32> = [5, 6, 8, 10, 13]

    /// The names of SQLite's primary result codes (https://sqlite.org/rescode.html).
    static func primaryCodeName(_ code: Int32) -> String {
        let names: [Int32: String] = [
            1: "SQLITE_ERROR", 2: "SQLITE_INTERNAL", 3: "SQLITE_PERM", 4: "SQLITE_ABORT", 5: "SQLITE_BUSY",
            6: "SQLITE_LOCKED", 7: "SQLITE_NOMEM", 8: "SQLITE_READONLY", 9: "SQLITE_INTERRUPT", 10: "SQLITE_IOERR",
            11: "SQLITE_CORRUPT", 12: "SQLITE_NOTFOUND", 13: "SQLITE_FULL", 14: "SQLITE_CANTOPEN",
            15: "SQLITE_PROTOCOL", 16: "SQLITE_EMPTY", 17: "SQLITE_SCHEMA", 18: "SQLITE_TOOBIG",
            19: "SQLITE_CONSTRAINT", 20: "SQLITE_MISMATCH", 21: "SQLITE_MISUSE", 22: "SQLITE_NOLFS",
            23: "SQLITE_AUTH", 24: "SQLITE_FORMAT", 25: "SQLITE_RANGE", 26: "SQLITE_NOTADB"
        ]
        return names[code & 0xFF] ?? "SQLITE_\(code)"
    }
}

extension StoreError {
    /// The SQLite result code of the underlying error, when it came from an SQLite database.
    public var sqliteResultCode: Int32? {
        (underlying as? DatabaseError)?.extendedResultCode.rawValue
    }
}
