import _ConnectionPoolModule
import GRDB
import Testing
@testable import TrellisStore
@testable import TrellisStorePostgres

/// Which failures a message waits out (the store comes back by itself) and which refuse it.
@Suite("Store errors: transient or not")
struct StoreErrorTransienceTests {
    @Test(
        "SQLite result codes",
        arguments: [
            (ResultCode.SQLITE_BUSY, true), (.SQLITE_LOCKED, true), (.SQLITE_FULL, true), (.SQLITE_READONLY, true),
            (.SQLITE_IOERR, true), (.SQLITE_IOERR_WRITE, true), (.SQLITE_BUSY_SNAPSHOT, true),
            (.SQLITE_CONSTRAINT, false), (.SQLITE_CORRUPT, false), (.SQLITE_ERROR, false), (.SQLITE_MISUSE, false),
            (.SQLITE_TOOBIG, false)
        ])
    func sqlite(code: ResultCode, transient: Bool) {
        let error = StoreError.wrap(DatabaseError(resultCode: code, message: "m"), operation: "op")
        #expect(error.isTransient == transient)
    }

    @Test("PostgreSQL problems and the pool's circuit breaker")
    func postgres() {
        #expect(PostgresFailure.isTransient(ConnectionPoolError.connectionCreationCircuitBreakerTripped))
        #expect(!PostgresFailure.isTransient(ConnectionPoolError.poolShutdown))
        #expect(!PostgresFailure.isTransient(StoreError.closed("op")))
        let wrapped = PostgresFailure.wrap(ConnectionPoolError.connectionCreationCircuitBreakerTripped, operation: "op")
        #expect(wrapped.isTransient)
        #expect(wrapped.kind == "POSTGRES_CONNECTION")
        #expect(wrapped.description.contains("cannot connect to the server"))
    }

    @Test("a closed store, a store that cannot open, and other errors are not transient")
    func others() {
        #expect(!StoreError.closed("op").isTransient)
        #expect(!StoreError.cannotOpen("/x", "open", underlying: DatabaseError(resultCode: .SQLITE_BUSY)).isTransient)
        #expect(!StoreError(code: .operationFailed, message: "m").isTransient)
    }
}
