import Foundation
import Logging
import TrellisStore
import TrellisStorePostgres
import TrellisStoreSQLite

extension EffectiveConfiguration {
    /// Opens the state store the configuration names: PostgreSQL when `state.store` is a
    /// `postgres://` URL (several relays may share it), else SQLite in `state.dir`.
    ///
    /// - Parameter owner: the relay's MQTT client id, whose delivery marks a shared store keeps apart.
    /// - Throws: ``StoreError`` (`.cannotOpen`) naming the store, its password hidden.
    ///
    /// A PostgreSQL server that cannot be reached yet (refused, unreachable, starting up) is waited
    /// for: logged once with its reason and what Trellis waits for, then tried again every few
    /// seconds (a reminder each minute) until it answers or `stop()` says a signal came. A refused
    /// login or a missing database ends the start at once.
    func openStore(owner: String, logger: Logger, stop: @Sendable () -> Bool = { false }) async throws -> any TrellisStore {
        let url = string("state.store")
        if url.isEmpty {
            return try SQLiteStore(directory: string("state.dir"), logger: logger)
        }
        let address = try PostgresURL(url)
        let started = ContinuousClock.now
        var reminded = started
        var attempts = 0
        while true {
            do {
                let store = try await PostgresStore.connect(address, owner: owner, logger: logger)
                if attempts > 0 {
                    logger.notice("the PostgreSQL store answers; starting", metadata: [
                        "store": "\(address)", "waited_s": "\(Int((ContinuousClock.now - started).components.seconds))"])
                }
                return store
            } catch let error as StoreError where error.serverUnavailable && !stop() {
                attempts += 1
                if attempts == 1 || ContinuousClock.now - reminded >= .seconds(60) {
                    reminded = .now
                    logger.warning("waiting for the PostgreSQL store before starting: \(error.message); retrying every 2 s", metadata: [
                        "store": "\(address)", "waiting_s": "\(Int((ContinuousClock.now - started).components.seconds))"])
                }
                try await Task.sleep(for: .seconds(2))
                if stop() { throw error }
            }
        }
    }

    /// Where the state is, for log lines: the directory or the URL without its password.
    var storeDescription: String {
        let url = string("state.store")
        if url.isEmpty { return string("state.dir") }
        return (try? PostgresURL(url))?.description ?? "a PostgreSQL database"
    }

    /// Why the settings cannot run as a relay of a share group, nil when they can: relays of one
    /// group must share their state, and each needs its own client id (the broker allows one
    /// connection per id, and the delivery marks are kept per id).
    var shareGroupProblem: String? {
        guard !string("broker.share_group").isEmpty else { return nil }
        if string("state.store").isEmpty {
            return "broker.share_group needs state.store (a postgres:// URL): the relays of a group must share one state, "
                + "and each SQLite state belongs to one relay"
        }
        if source("broker.client_id") == .default && string("broker.username").isEmpty && brokerURL?.username == nil {
            return "broker.share_group needs broker.client_id (--client-id) set, to a different id on every relay of the group"
        }
        return nil
    }
}
