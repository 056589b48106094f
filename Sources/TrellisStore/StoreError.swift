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
        /// The store was used after it was closed.
        case closed
        /// The place holds no state and was opened only to read it, so none was made.
        case noState
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
    /// backend's name for it (``StoreFailureCause/kind``: `SQLITE_FULL`, `SQLITE_BUSY`, PostgreSQL's
    /// `connection_failure`, …), `closed` for a closed store, `other` for anything else.
    public var kind: String {
        if code == .closed { return "closed" }
        return classified?.kind ?? "other"
    }

    /// The cause of a failure as a log line or health answer shows it: the backend's words with the
    /// operating system's reason, e.g. `SQLITE_FULL: database or disk is full`.
    public var cause: String {
        guard let classified else { return underlying.map { String(describing: $0) } ?? message }
        return classified.causeText + (systemReason.map { " (\($0))" } ?? "")
    }

    /// Whether the failure passes without anything in the request changing (the backend's
    /// ``StoreFailureCause/isTransient``: a busy, locked, full or read-only database, an unreachable
    /// server, a lost connection). A message whose handling meets such a failure waits for the store
    /// instead of being refused (``OutageWaiting``). A closed store, a store that cannot be opened, a
    /// constraint, a corrupt file or a statement the server refuses are not transient.
    public var isTransient: Bool {
        code == .operationFailed && classified?.isTransient == true
    }

    /// Whether a store that could not be opened failed because its server could not be reached
    /// or was not ready yet (refused, unreachable, starting up, shutting down), which waiting
    /// may cure, rather than a refused login or a missing database, which it will not.
    public var serverUnavailable: Bool {
        code == .cannotOpen && classified?.isServerUnavailable == true
    }

    /// The underlying error, when a backend classified it.
    private var classified: (any StoreFailureCause)? { underlying as? any StoreFailureCause }

    /// An error for a store that could not be opened at `path`.
    package static func cannotOpen(_ path: String, _ what: String, underlying: (any Error)?) -> StoreError {
        StoreError(code: .cannotOpen, message: "cannot \(what) at \(path)", underlying: underlying)
    }

    /// An error for an operation attempted after the store was closed.
    package static func closed(_ operation: String) -> StoreError {
        StoreError(code: .closed, message: "\(operation) called on a closed store")
    }

    /// Wraps `error` as a failure of `operation`, leaving an existing ``StoreError`` untouched.
    package static func wrap(_ error: any Error, operation: String, systemReason: String? = nil) -> StoreError {
        if let storeError = error as? StoreError { return storeError }
        return StoreError(
            code: .operationFailed, message: "\(operation) failed", underlying: error,
            systemReason: systemReason)
    }

    /// A compact rendering of an underlying error: the backend's words when it classified it.
    private static func describe(_ error: any Error) -> String {
        (error as? any StoreFailureCause)?.summary ?? String(describing: error)
    }
}

/// An error of a store's database that its backend classifies, so that ``StoreError`` can say what
/// kind of failure it was and whether waiting may cure it without knowing the database.
public protocol StoreFailureCause: Error {
    /// The failure in one stable word (`SQLITE_FULL`, `connection_failure`).
    var kind: String { get }
    /// The database's words for the failure with its code, for an error's description.
    var summary: String { get }
    /// The failure as a log line or health answer shows it: the kind and the database's words.
    var causeText: String { get }
    /// Whether the same operation may succeed later with nothing in it changed.
    var isTransient: Bool { get }
    /// Whether the database's server could not be reached or was not ready.
    var isServerUnavailable: Bool { get }
}
