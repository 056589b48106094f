import TrellisApplication
import ArgumentParser
import Foundation
import Logging
import TrellisCore
import TrellisStore
import TrellisStoreSQLite

/// `trellis plants`: the household's plants in the state.
struct PlantsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plants",
        abstract: "Manage the plant tracker's plants in Trellis's state.",
        subcommands: [ImportHost.self]
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
            let maxPlants = configuration.int("plant.max_plants")
            let read = try readDirectory(maximumNameLength: configuration.int("plant.max_name_length"))
            var logger = Logger(label: "trellis.plants")
            logger.logLevel = .warning
            let imported = read.plants.map { ImportedPlant(name: $0.name, sensors: $0.sensors) }
            // An SQLite state is changed alone (a relay reads the plants at start); a PostgreSQL store beside its relays.
            let use: StateUse = if case .sqlite = place { .changeAlone } else { .changeBesideRelays }
            let status: Int32
            do {
                if dryRun, let file = place.databaseFile, !FileManager.default.fileExists(atPath: file) {
                    // No state yet: reported against the empty one the import would make, without making it.
                    let empty = try SQLiteStore.inMemory()
                    status = try await apply(imported, read: read, maxPlants: maxPlants, place: place, store: empty)
                    try await empty.close()
                } else {
                    status = try await place.withStore(use, owner: "trellis-plants-import", logger: logger) { store in
                        try await apply(imported, read: read, maxPlants: maxPlants, place: place, store: store)
                    }
                }
            } catch let exit as CommandFailure {
                throw exit
            } catch {
                throw fail("not imported: \(error)")
            }
            if status != 0 { throw ExitCodeError() }
        }

        /// Reports what the import will do, then does it when allowed; returns the exit status.
        func apply(
            _ imported: [ImportedPlant], read: HostFiles, maxPlants: Int, place: StatePlace,
            store: any TrellisStore
        ) async throws -> Int32 {
            guard let importer = store as? any PlantImportStore else {
                throw StoreError(code: .operationFailed, message: "this store cannot import plants")
            }
            let planned = try await importer.importPlants(imported, maxPlants: maxPlants, mode: .dryRun)
            print(Self.report(read, verdicts: planned.verdicts, maxPlants: maxPlants, into: place.description))
            let refused = planned.verdicts.filter { $0 != .add && $0 != .alreadyThere }.count + read.problems.count
            if dryRun {
                print("dry run: nothing changed")
                return refused > 0 && !partial ? 1 : 0
            }
            if refused > 0 && !partial {
                print("nothing changed: \(refused) cannot be taken; give --partial to add the others")
                return 1
            }
            let done = try await importer.importPlants(
                imported, maxPlants: maxPlants, mode: partial ? .partial : .allOrNothing)
            if done.verdicts != planned.verdicts {
                print("the state changed meanwhile; what was done:")
                print(Self.report(read, verdicts: done.verdicts, maxPlants: maxPlants, into: place.description))
            }
            let added = done.applied ? done.verdicts.filter { $0 == .add }.count : 0
            print("added \(added) plant\(added == 1 ? "" : "s") to \(place.description)")
            return done.refusesSome && !partial ? 1 : 0
        }

        /// The plants of every `<phone>.json` of the directory, merged, and what cannot be taken.
        func readDirectory(maximumNameLength: Int) throws -> HostFiles {
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }
                    .sorted()
            } catch {
                throw fail("cannot read \(directory): \(error.localizedDescription)")
            }
            guard !names.isEmpty else { throw fail("\(directory) holds no <phone>.json file of host.py") }
            var phones: [[HostUserdata.Plant]] = []
            var problems: [HostUserdata.Problem] = []
            for name in names {
                let phone = String(name.dropLast(".json".count))
                guard
                    let data = FileManager.default.contents(
                        atPath: (directory as NSString).appendingPathComponent(name))
                else {
                    problems.append(
                        HostUserdata.Problem(subject: name, reason: "unreadable: the file cannot be opened"))
                    continue
                }
                let read = HostUserdata.read(
                    phone: phone, contents: [UInt8](data), maximumNameLength: maximumNameLength)
                phones.append(read.plants)
                problems += read.problems
            }
            let merged = HostUserdata.merge(phones)
            return HostFiles(plants: merged.plants, problems: problems + merged.problems, files: names.count)
        }
    }
}
