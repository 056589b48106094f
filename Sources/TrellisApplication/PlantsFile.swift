import Foundation
import TrellisCore

/// A plants file could not be used.
package struct PlantsFileError: Error, CustomStringConvertible {
    package var description: String
}

/// Reads a plants file: one plant per line as `name,sensor[,sensor…]`, `#` comments, blank lines ignored.
package enum PlantsFile {
    package static func read(_ path: String) throws -> [NewPlantRequest] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw PlantsFileError(description: "cannot read the plants file \(path)")
        }
        var plants: [NewPlantRequest] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            guard !line.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            switch NewPlantRequest.parse(String(line)) {
            case let .success(plant): plants.append(plant)
            case let .failure(tag):
                throw PlantsFileError(
                    description: "\(path):\(index + 1): '\(line)' is not `name,sensor[,sensor…]` (\(tag.rawValue))")
            }
        }
        return plants
    }
}
