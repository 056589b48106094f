import Foundation

/// Bringing a household's plants over from elsewhere (`trellis plants import-host`) in one
/// atomic operation: what is there, what fits under the plant limit and what is added are decided
/// and done in one transaction, so a phone's add at the same moment cannot slip between them.
public protocol PlantImportStore: Sendable {
    /// Decides, for each plant in order, whether it is already there (the same name with the same
    /// sensors, in any order), clashes (the name is taken with other sensors), would go over
    /// `maxPlants`, or can be added; then adds the addable ones when `mode` allows (see
    /// ``PlantImportMode``), or nothing. One transaction.
    func importPlants(_ plants: [ImportedPlant], maxPlants: Int, mode: PlantImportMode) async throws
        -> PlantImportOutcome
}

/// A plant to import: a valid name and canonical sensor addresses.
public struct ImportedPlant: Sendable, Equatable {
    public var name: String
    public var sensors: [String]

    public init(name: String, sensors: [String]) {
        self.name = name
        self.sensors = sensors
    }
}

/// When ``PlantImportStore/importPlants(_:maxPlants:mode:)`` adds.
public enum PlantImportMode: Sendable, Equatable {
    /// Never: only what would happen.
    case dryRun
    /// Only when every plant is added or already there.
    case allOrNothing
    /// The plants that can be added, leaving the others.
    case partial
}

/// What an import found for one plant.
public enum PlantImportVerdict: Sendable, Equatable {
    /// Not there, and within the plant limit.
    case add
    /// A plant of this name with the same sensors exists.
    case alreadyThere
    /// A plant of this name exists with these other sensors.
    case nameTaken(existing: [String])
    /// Adding it would make more than the plant limit.
    case overLimit

    /// The verdict on one plant of `sensors`: `existing` are the sensors of the plant of its name in
    /// the state (nil when none has it), `count` the plants the state would hold with the adds judged
    /// so far, which an add raises. Both backends judge with it inside their import transaction.
    package static func judge(sensors: [String], existing: [String]?, count: inout Int, maxPlants: Int)
        -> PlantImportVerdict
    {
        if let existing { return Set(existing) == Set(sensors) ? .alreadyThere : .nameTaken(existing: existing) }
        guard count < maxPlants else { return .overLimit }
        count += 1
        return .add
    }
}

/// An import's verdicts, in the order of the plants given, and whether the additions were made.
public struct PlantImportOutcome: Sendable, Equatable {
    public var verdicts: [PlantImportVerdict]
    /// True when the plants with verdict ``PlantImportVerdict/add`` were added.
    public var applied: Bool

    public init(verdicts: [PlantImportVerdict], applied: Bool) {
        self.verdicts = verdicts
        self.applied = applied
    }

    /// Whether some plant can be neither added nor found already there.
    public var refusesSome: Bool {
        verdicts.contains { $0 != .add && $0 != .alreadyThere }
    }

    /// Whether `mode` lets the additions be made, given the verdicts.
    package static func applies(_ verdicts: [PlantImportVerdict], mode: PlantImportMode) -> Bool {
        switch mode {
        case .dryRun: false
        case .partial: true
        case .allOrNothing: !PlantImportOutcome(verdicts: verdicts, applied: false).refusesSome
        }
    }
}
