import TrellisApplication
import ArgumentParser
import Foundation

/// `trellis plants`: the household's plants in the state.
struct PlantsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plants",
        abstract: "Manage the plant tracker's plants in Trellis's state.",
        subcommands: [ImportHost.self, History.self]
    )

    /// `trellis plants import-host DIR`: the plants of the original host's `userdata/` directory.
    struct ImportHost: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import-host",
            abstract: "Bring the plants of the original host.py over from its userdata/ directory.",
            discussion: """
                Reads every <phone>.json of DIR (host.py kept one list of {"Name", "Sensors"} per phone), reads \
                each sensor address as host.py did (int(x, 16): 37 is 0x37), and merges the phones' lists into \
                the household's: a plant on several phones is added once. Then it reports, before changing \
                anything, what it will add, what is already there (the same name with the same sensors), and what \
                it cannot take: a name longer than plant.max_name_length, more plants than plant.max_plants, a \
                name taken (in the state, or on another phone) with other sensors, an unreadable file or entry. \
                Nothing is changed unless everything can be taken, or --partial is given (then what can be added \
                is). The check and the additions are one transaction.

                The state is found as `trellis run` finds it (--state, --store, state.store, state.dir), and made \
                there when there is none yet, as `trellis run` would make it: import first, then start the relay. \
                An SQLite state is refused while a relay runs on it: stop it first (its plants are read at start). A \
                PostgreSQL store is changed while relays run, under the lock every add of a plant takes, so it \
                counts against the plant limit exactly as a phone's add would.

                Exits 0 when everything was taken (or, with --partial, what could be), 1 when nothing was changed \
                because something cannot be taken, the state is in use, or DIR cannot be read. --dry-run exits as \
                the same command without it would, changing nothing.
                """
        )

        @Argument(help: ArgumentHelp("host.py's userdata/ directory (its <phone>.json files).", valueName: "dir"))
        var directory: String

        @Flag(name: .long, help: "Add what can be added even when some plants cannot be taken.")
        var partial = false

        @Flag(name: .long, help: "Only report what would be done; change nothing.")
        var dryRun = false

        @OptionGroup var location: StateStoreLocation

        func run() async throws {
            let (place, configuration) = try await location.resolve()
            let status = try await HostImport(directory: directory, partial: partial, dryRun: dryRun).run(
                at: place, maxPlants: configuration.int("plant.max_plants"),
                maximumNameLength: configuration.int("plant.max_name_length")
            ) { print($0) }
            if status != 0 { throw ExitCodeError() }
        }
    }
}
