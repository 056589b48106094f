import ArgumentParser
import Foundation
import Logging
import TrellisStore
import TrellisStoreSQLite
import TrellisStorePostgres

/// The state a command reads or changes, found as `trellis run` finds it: `--state DIR` (SQLite),
/// else `--store URL` (PostgreSQL), else the configuration's `state.store` (a `postgres://` URL,
/// from `--config`, `trellis.yaml` or `TRELLIS_STATE_STORE`), else its `state.dir` (default
/// `trellis-state`).
struct StateStoreLocation: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The SQLite state directory (default: state.store, else state.dir, else trellis-state).", valueName: "dir"))
    var state: String?

    @Option(name: .long, help: ArgumentHelp("A PostgreSQL store: postgres://user[:password]@host[:port]/database (default: state.store). A URL with a password is better given in TRELLIS_STATE_STORE.", valueName: "url"))
    var store: String?

    @Option(name: .long, help: ArgumentHelp("The configuration file to find state.store and state.dir in (default: trellis.yaml when present).", valueName: "file"))
    var config: String?

    /// Where the state is.
    enum Place {
        case sqlite(directory: String)
        case postgres(PostgresURL)

        var description: String {
            switch self {
            case let .sqlite(directory): directory
            case let .postgres(url): url.description
            }
        }
    }

    /// The place these options (and the configuration) name.
    func place() async throws -> Place {
        try await resolve().place
    }

    /// The place, and the configuration it was found in (for limits such as `plant.max_plants`).
    func resolve() async throws -> (place: Place, configuration: EffectiveConfiguration) {
        let effective = try await EffectiveConfiguration.load(file: config)
        if let state { return (.sqlite(directory: state), effective) }
        if let store { return (.postgres(try PostgresURL(store)), effective) }
        let url = effective.string("state.store")
        if !url.isEmpty { return (.postgres(try PostgresURL(url)), effective) }
        return (.sqlite(directory: effective.string("state.dir")), effective)
    }

    /// Opens the state at `place`; an SQLite directory without a state is refused, never created.
    static func open(_ place: Place, owner: String, logger: Logger) async throws -> any TrellisStore {
        switch place {
        case let .sqlite(directory):
            let database = (directory as NSString).appendingPathComponent(SQLiteStore.fileName)
            guard FileManager.default.fileExists(atPath: database) else {
                throw StoreError(code: .cannotOpen, message: "\(directory) holds no Trellis state (no \(SQLiteStore.fileName))")
            }
            return try SQLiteStore(directory: directory, logger: logger)
        case let .postgres(url):
            return try await PostgresStore.connect(url, owner: owner, logger: logger)
        }
    }
}
