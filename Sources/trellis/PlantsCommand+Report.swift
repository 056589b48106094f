import Foundation
import TrellisCore
import TrellisStore

/// What `trellis plants import-host` read from host.py's files.
struct HostFiles {
    /// The household's plants, merged over the phones.
    var plants: [HostUserdata.Plant]
    /// What of the files cannot be taken, whatever the state holds.
    var problems: [HostUserdata.Problem]
    /// How many `<phone>.json` files were read.
    var files: Int
}

extension PlantsCommand.ImportHost {
    /// The report printed before anything changes: what will be added, what is already there, and
    /// what cannot be taken, each plant on a line with its sensors and the phones that had it.
    static func report(_ read: HostFiles, verdicts: [PlantImportVerdict], maxPlants: Int, into place: String) -> String
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
        var lines = [
            "read \(read.files) phone file\(read.files == 1 ? "" : "s"): \(read.plants.count) plant\(read.plants.count == 1 ? "" : "s") for \(place)"
        ]
        lines.append("will add (\(add.count)):")
        lines += add
        lines.append("already there (\(there.count)):")
        lines += there
        lines.append("cannot take (\(cannot.count)):")
        lines += cannot
        return lines.joined(separator: "\n")
    }
}
