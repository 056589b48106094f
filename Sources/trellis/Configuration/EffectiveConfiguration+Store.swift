import Foundation
import Logging
import TrellisStore

extension EffectiveConfiguration {
    /// Opens the state store the configuration names: PostgreSQL when `state.store` is a
    /// `postgres://` URL (several relays may share it), else SQLite in `state.dir`.
    ///
    /// - Parameter owner: the relay's MQTT client id, whose delivery marks a shared store keeps apart.
    /// - Throws: ``StoreError`` (`.cannotOpen`) naming the store, its password hidden.
    func openStore(owner: String, logger: Logger) async throws -> any TrellisStore {
        let url = string("state.store")
        if url.isEmpty {
            return try SQLiteStore(directory: string("state.dir"), logger: logger)
        }
        return try await PostgresStore.connect(try PostgresURL(url), owner: owner, logger: logger)
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
