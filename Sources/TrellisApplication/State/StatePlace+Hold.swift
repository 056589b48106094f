import Logging
import TrellisStore

extension StatePlace {
    /// Runs `body` holding the place as `use` needs (``StateHold``), and lets go afterwards.
    package func withHold<T>(_ use: StateUse, _ body: () async throws -> T) async throws -> T {
        let hold = try StateHold.take(self, for: use)
        defer { hold.release() }
        return try await body()
    }

    /// Runs `body` with the store opened for `use` (made and migrated where it is missing and
    /// `use` changes it; a reading command on a place with no state is told so, and makes none);
    /// closes it and lets go of the lock whatever happens. A PostgreSQL server
    /// that does not answer is not waited for: the command says so and exits.
    package func withStore<T>(
        _ use: StateUse, owner: String, logger: Logger,
        _ body: (any TrellisStore) async throws -> T
    ) async throws -> T {
        try await withHold(use) {
            let store: any TrellisStore
            do {
                store = try await open(owner: owner, logger: logger, creating: use != .read)
            } catch let error as StoreError where error.code == .noState {
                throw StateAccessError.noState(self)
            }
            return try await closing(store) { try await body($0) }
        }
    }
}
