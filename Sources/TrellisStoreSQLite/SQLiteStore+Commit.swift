import Foundation
import GRDB
import GRDBSQLite
import TrellisCore
import TrellisStore

/// How the SQLite store commits and checks its file: one immediate transaction per commit, with
/// the operating system's reason kept when SQLite fails on the file system, and a page-by-page
/// check of an existing file before it is used.
extension SQLiteStore {
    /// Runs `body` in one immediate transaction on `writer`, wrapping a failure as ``StoreError``
    /// with the operating system's reason when SQLite reports one (a full or read-only file system).
    static func transaction<T: Sendable>(
        in writer: any DatabaseWriter, operation: @autoclosure () -> String,
        _ body: @Sendable @escaping (Database) throws -> T
    ) async throws -> T {
        do {
            return try await writer.writeWithoutTransaction { db in
                do {
                    var result: T?
                    try db.inTransaction(.immediate) {
                        result = try body(db)
                        return .commit
                    }
                    return result!
                } catch let error as DatabaseError {
                    throw SystemFailure(error: error, reason: systemReason(of: error, in: db))
                }
            }
        } catch let failure as SystemFailure {
            throw StoreError.wrap(failure.error, operation: operation(), systemReason: failure.reason)
        } catch {
            throw StoreError.wrap(error, operation: operation())
        }
    }

    /// A database error with the operating system's reason, carried out of the connection's queue.
    private struct SystemFailure: Error {
        let error: DatabaseError
        let reason: String?
    }

    /// The operating system's words for the error behind an I/O, full-disk, read-only or open
    /// failure of `db` (`No space left on device`), when there is one.
    private static func systemReason(of error: DatabaseError, in db: Database) -> String? {
        guard [10, 13, 8, 14].contains(error.resultCode.rawValue & 0xFF) else { return nil }
        let number = sqlite3_system_errno(db.sqliteConnection)
        guard number != 0, let text = strerror(number) else { return nil }
        return String(cString: text)
    }

    /// Reads every page of an existing state file once (`PRAGMA quick_check`), so a damaged file is
    /// refused at start, naming the file and SQLite's reason, rather than failing later in the
    /// middle of traffic. Nothing is written: the file stays as it was.
    static func checkIntegrity(of pool: DatabasePool, at path: String) throws {
        let problems: [String]
        do {
            problems = try pool.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check(3)") }
        } catch {
            try? pool.close()
            throw StoreError.cannotOpen(path, "read the database", underlying: error)
        }
        guard problems == ["ok"] else {
            try? pool.close()
            // One line: SQLite's report spans lines and opens with `*** in database main ***`.
            let reasons = problems.flatMap { $0.split(separator: "\n") }.filter { !$0.hasPrefix("***") }
            throw StoreError(
                code: .cannotOpen,
                message: "the database at \(path) is damaged (PRAGMA quick_check: \(reasons.joined(separator: "; ")))")
        }
    }
}
