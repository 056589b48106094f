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

    /// Creates an error; prefer the static helpers, which keep messages uniform.
    public init(code: Code, message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// The message followed by the underlying error, if any.
    public var description: String {
        guard let underlying else { return message }
        return "\(message): \(Self.describe(underlying))"
    }

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
    static func wrap(_ error: any Error, operation: String) -> StoreError {
        if let storeError = error as? StoreError { return storeError }
        return StoreError(code: .operationFailed, message: "\(operation) failed", underlying: error)
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
