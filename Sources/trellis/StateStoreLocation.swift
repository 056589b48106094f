import TrellisApplication
import ArgumentParser
import Configuration
import Foundation
import Logging
import TrellisStore

/// The options that name the state a command reads or changes, and the configuration they are
/// read into: the same file (`--config`, else `trellis.yaml` when present), `TRELLIS_…` variables
/// and flags in the same order as `trellis run` reads them. `--state DIR` names an SQLite state
/// (state.dir; a state.store of the file or the environment is then not used), `--store URL` a
/// PostgreSQL one (state.store); without either, state.store, else state.dir (default trellis-state).
struct StateStoreLocation: ParsableArguments {
    /// How a command that reads the state finds it, as its discussion begins (without a full stop).
    static let readsDirectly =
        "Reads the state store directly (SQLite, also while a relay runs on it; or PostgreSQL), found as `trellis run` finds it"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The SQLite state directory (default: state.store, else state.dir, else trellis-state).", valueName: "dir"))
    var state: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A PostgreSQL store: postgres://user[:password]@host[:port]/database (default: state.store). A URL with a password is better given in TRELLIS_STATE_STORE.",
            valueName: "url"))
    var store: String?

    @OptionGroup var configFile: ConfigFileOption

    /// The options as settings given by flags.
    var flags: [String: ConfigContent] {
        var flags: [String: ConfigContent] = [:]
        if let state {
            flags["state.dir"] = .string(state)
            flags["state.store"] = .string("")
        }
        if let store { flags["state.store"] = .string(store) }
        return flags
    }

    /// The configuration with these options, and the place of the state it names; an invalid
    /// configuration is reported and exits 1.
    func resolve() async throws -> (place: StatePlace, configuration: EffectiveConfiguration) {
        let configuration = try await configFile.read(flags: flags)
        return (try StatePlace(configuration), configuration)
    }
}

/// `--config FILE`, the configuration file a command reads as `trellis run` does: that file, else
/// `trellis.yaml` when present, with `TRELLIS_…` variables over it.
struct ConfigFileOption: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The configuration file `trellis run` reads (default: trellis.yaml when present).", valueName: "file"))
    var config: String?

    /// The effective configuration, with `flags` over the file and the environment.
    func read(flags: [String: ConfigContent] = [:]) async throws -> EffectiveConfiguration {
        try await EffectiveConfiguration.forCommand(file: config, flags: flags)
    }
}
