import Foundation
import Logging
import TrellisStore
import TrellisStorePostgres
import TrellisStoreSQLite

/// Where a state is: an SQLite state directory, or a PostgreSQL database several relays may share.
/// Every command that reads or changes a state opens it here, as `trellis run` does: the same
/// store types, so the same migrations on first use.
package enum StatePlace: CustomStringConvertible {
    case sqlite(directory: String)
    case postgres(PostgresURL)

    /// The place a configuration names: `state.store` when it is set, else `state.dir`.
    package init(_ configuration: EffectiveConfiguration) throws {
        self = try Self(store: configuration.string("state.store"), directory: configuration.string("state.dir"))
    }

    /// A PostgreSQL store when `store` is a URL, else the SQLite state in `directory`.
    package init(store: String, directory: String) throws {
        self = store.isEmpty ? .sqlite(directory: directory) : .postgres(try PostgresURL(store))
    }

    /// A place named by one argument (`trellis store copy`): a `postgres://` URL or a directory.
    package init(naming text: String) throws {
        self = PostgresURL.isPostgres(text) ? .postgres(try PostgresURL(text)) : .sqlite(directory: text)
    }

    /// The directory, or the URL without its password: what log lines and messages name.
    package var description: String {
        switch self {
        case let .sqlite(directory): directory
        case let .postgres(url): url.description
        }
    }

    /// The SQLite database file of the place, nil for PostgreSQL.
    package var databaseFile: String? {
        guard case let .sqlite(directory) = self else { return nil }
        return (directory as NSString).appendingPathComponent(SQLiteStore.fileName)
    }

    /// Opens the store, creating or migrating its schema as every release does at start. A
    /// PostgreSQL server that cannot be reached yet (refused, unreachable, starting up) is waited
    /// for while `wait` says so (`trellis run`: until a signal): logged once with its reason, then
    /// tried again every two seconds with a reminder each minute. A refused login or a missing
    /// database ends it at once.
    ///
    /// - Parameters:
    ///   - owner: the client id whose delivery marks a shared store keeps apart.
    ///   - creating: false for a command that only reads: a PostgreSQL database without Trellis's
    ///     tables is left as it is (``StoreError/Code/noState``). An SQLite state is checked for before
    ///     it is opened (``StateHold``).
    /// - Throws: ``StoreError`` (`.cannotOpen`, `.noState`) naming the store, its password hidden.
    func open(
        owner: String, logger: Logger, creating: Bool = true, wait: @Sendable () -> Bool = { false }
    ) async throws -> any TrellisStore {
        let address: PostgresURL
        switch self {
        case let .sqlite(directory): return try SQLiteStore(directory: directory, logger: logger)
        case let .postgres(url): address = url
        }
        let started = ContinuousClock.now
        var reminded = started
        var attempts = 0
        while true {
            do {
                let store = try await PostgresStore.connect(
                    address, owner: owner, logger: logger, creating: creating)
                if attempts > 0 {
                    logger.notice(
                        "the PostgreSQL store answers; starting",
                        metadata: [
                            "store": "\(address)",
                            "waited_s": "\(Int((ContinuousClock.now - started).components.seconds))"
                        ])
                }
                return store
            } catch let error as StoreError where error.serverUnavailable && wait() {
                attempts += 1
                if attempts == 1 || ContinuousClock.now - reminded >= .seconds(60) {
                    reminded = .now
                    logger.warning(
                        "waiting for the PostgreSQL store before starting: \(error.message); retrying every 2 s",
                        metadata: [
                            "store": "\(address)",
                            "waiting_s": "\(Int((ContinuousClock.now - started).components.seconds))"
                        ])
                }
                try await Task.sleep(for: .seconds(2))
                if !wait() { throw error }
            }
        }
    }
}

extension EffectiveConfiguration {
    /// Where the state is, for log lines: the directory or the URL without its password.
    package var storeDescription: String {
        (try? StatePlace(self))?.description ?? "a PostgreSQL database"
    }

    /// Why the settings cannot run as a relay of a share group, nil when they can: relays of one
    /// group must share their state, and each needs its own client id (the broker allows one
    /// connection per id, and the delivery marks are kept per id).
    package var shareGroupProblem: String? {
        guard !string("broker.share_group").isEmpty else { return nil }
        if string("state.store").isEmpty {
            return
                "broker.share_group needs state.store (a postgres:// URL): the relays of a group must share one state, "
                + "and each SQLite state belongs to one relay"
        }
        if namedClientID == nil {
            return
                "broker.share_group needs broker.client_id (--client-id) set, to a different id on every relay of the group"
        }
        return nil
    }
}
