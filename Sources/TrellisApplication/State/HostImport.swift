import Foundation
import Logging
import TrellisCore
import TrellisStore
import TrellisStoreSQLite

/// `trellis plants import-host DIR`: the plants of the original host.py's `userdata/` directory
/// (one `<phone>.json` per phone), merged into the household's and added to a state in one
/// transaction, after a report of what will be added, what is already there and what cannot be taken.
package struct HostImport {
    /// What was read from host.py's files.
    package struct Files {
        /// The household's plants, merged over the phones.
        package var plants: [HostUserdata.Plant]
        /// What of the files cannot be taken, whatever the state holds.
        package var problems: [HostUserdata.Problem]
        /// How many `<phone>.json` files were read.
        package var files: Int
    }

    /// host.py's `userdata/` directory.
    package var directory: String
    /// Add what can be added even when some plants cannot be taken.
    package var partial = false
    /// Only report; change nothing.
    package var dryRun = false

    package init(directory: String, partial: Bool = false, dryRun: Bool = false) {
        self.directory = directory
        self.partial = partial
        self.dryRun = dryRun
    }

    /// Imports into the state at `place` (made there when missing, as `trellis run` makes it; an SQLite
    /// state is changed alone, a PostgreSQL one beside its relays), handing each line of the report to
    /// `print`. Returns the exit status: 1 when something cannot be taken and nothing was changed.
    package func run(
        at place: StatePlace, maxPlants: Int, maximumNameLength: Int, print: (String) -> Void
    ) async throws -> Int32 {
        let read = try readDirectory(maximumNameLength: maximumNameLength)
        var logger = Logger(label: "trellis.plants")
        logger.logLevel = .warning
        let imported = read.plants.map { ImportedPlant(name: $0.name, sensors: $0.sensors) }
        let use: StateUse = if case .sqlite = place { .changeAlone } else { .changeBesideRelays }
        do {
            if dryRun, let file = place.databaseFile, !FileManager.default.fileExists(atPath: file) {
                // No state yet: reported against the empty one the import would make, without making it.
                let empty = try SQLiteStore.inMemory()
                let status = try await apply(
                    imported, read: read, maxPlants: maxPlants, place: place, store: empty, print)
                try await empty.close()
                return status
            }
            return try await place.withStore(use, owner: "trellis-plants-import", logger: logger) { store in
                try await apply(imported, read: read, maxPlants: maxPlants, place: place, store: store, print)
            }
        } catch let exit as CommandFailure {
            throw exit
        } catch {
            throw fail("not imported: \(error)")
        }
    }

    /// Reports what the import will do, then does it when allowed; returns the exit status.
    private func apply(
        _ imported: [ImportedPlant], read: Files, maxPlants: Int, place: StatePlace, store: any TrellisStore,
        _ print: (String) -> Void
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
    package func readDirectory(maximumNameLength: Int) throws -> Files {
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
            guard let data = FileManager.default.contents(atPath: (directory as NSString).appendingPathComponent(name))
            else {
                problems.append(HostUserdata.Problem(subject: name, reason: "unreadable: the file cannot be opened"))
                continue
            }
            let read = HostUserdata.read(
                phone: String(name.dropLast(".json".count)), contents: [UInt8](data),
                maximumNameLength: maximumNameLength)
            phones.append(read.plants)
            problems += read.problems
        }
        let merged = HostUserdata.merge(phones)
        return Files(plants: merged.plants, problems: problems + merged.problems, files: names.count)
    }

    /// The report printed before anything changes: what will be added, what is already there, and
    /// what cannot be taken, each plant on a line with its sensors and the phones that had it.
    package static func report(_ read: Files, verdicts: [PlantImportVerdict], maxPlants: Int, into place: String)
        -> String
    {
        var add: [String] = []
        var there: [String] = []
        var cannot: [String] = read.problems.map { "  \($0.description)" }
        for (plant, verdict) in zip(read.plants, verdicts) {
            let line =
                "  \(plant.name)  \(plant.sensors.joined(separator: " "))  (\(plant.phones.joined(separator: ", ")))"
            switch verdict {
            case .add: add.append(line)
            case .alreadyThere: there.append(line)
            case let .nameTaken(existing):
                cannot.append(
                    "\(line): the name is taken in the state with other sensors (\(existing.joined(separator: " ")))")
            case .overLimit:
                cannot.append("\(line): more plants than plant.max_plants (\(maxPlants))")
            }
        }
        let plural = (read.files == 1 ? "" : "s", read.plants.count == 1 ? "" : "s")
        return
            ([
                "read \(read.files) phone file\(plural.0): \(read.plants.count) plant\(plural.1) for \(place)",
                "will add (\(add.count)):"
            ] + add + ["already there (\(there.count)):"] + there + ["cannot take (\(cannot.count)):"] + cannot)
            .joined(separator: "\n")
    }
}
