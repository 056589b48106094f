import Foundation
import TrellisCore

/// Plants, the sensors assigned to them and the latest reading of each sensor.
///
/// Every mutation is one atomic database operation, so several relays may share one store.
public protocol PlantStore: Sendable {
    /// Adds a plant unless its name is taken (case-sensitive) or `maxPlants` plants already exist.
    ///
    /// Both checks and the insert happen in one transaction; when both checks fail the outcome is
    /// ``AddPlantOutcome/nameTaken``. A sensor repeated in `sensors` is kept once, at its first place.
    func addPlant(name: String, sensors: [String], maxPlants: Int) async throws -> AddPlantOutcome

    /// Deletes a plant and its sensor assignments; the sensors' readings stay.
    /// - Returns: the deleted plant's ``StoredPlant/id``; nil when no plant has that name.
    func deletePlant(name: String) async throws -> Int64?

    /// Renames the plant `old` to `new` unless another plant has `new`, in one transaction. The
    /// plant keeps its row (so its browse PERM_ID), its sensors in their order, its species link
    /// and its care alerts. `new` equal to `old` is ``RenamePlantOutcome/renamed`` when the plant exists.
    /// When `new` is taken and `old` is absent, the outcome is ``RenamePlantOutcome/nameTaken``, as
    /// the original host checked the new name first.
    func renamePlant(from old: String, to new: String) async throws -> RenamePlantOutcome

    /// Every plant, ordered by ``StoredPlant/id`` (creation order).
    func plants() async throws -> [StoredPlant]

    /// Inserts plants whose names are not taken yet and leaves existing ones untouched.
    ///
    /// Meant for a plants file read at start; the plant limit does not apply.
    /// - Returns: how many plants were added.
    @discardableResult
    func seedPlants(_ plants: [(name: String, sensors: [String])]) async throws -> Int

    /// Keeps `at`'s reading as the sensor's latest unless a newer one is already stored.
    ///
    /// Written behind: the call returns once the reading is queued, and readers that depend on
    /// readings see it. Write failures are reported by the next `flush()`.
    func recordReading(sensor: String, moisture: Int, temperature: Double, at: Date) async throws

    /// One record per sensor of the named plant, or of every plant when `plant` is nil, ordered
    /// by plant then by the sensor order given when the plant was added.
    /// - Returns: `nil` when a plant is named and does not exist.
    func sensorRecords(plant: String?) async throws -> [PlantSensorRecord]?
}

/// What ``PlantStore/addPlant(name:sensors:maxPlants:)`` did.
public enum AddPlantOutcome: Sendable, Equatable {
    /// The plant was stored under this ``StoredPlant/id``.
    case added(id: Int64)
    /// A plant with exactly this name already exists.
    case nameTaken
    /// The store already holds `maxPlants` plants.
    case tooManyPlants

    /// The added plant's id; nil when nothing was added.
    public var plantID: Int64? {
        if case let .added(id) = self { id } else { nil }
    }
}

/// What ``PlantStore/renamePlant(from:to:)`` did.
public enum RenamePlantOutcome: Sendable, Equatable {
    /// The plant (this ``StoredPlant/id``) has the new name now.
    case renamed(id: Int64)
    /// Another plant has the new name; nothing changed.
    case nameTaken
    /// No plant has the old name; nothing changed.
    case notFound

    /// The renamed plant's id; nil when nothing was renamed.
    public var plantID: Int64? {
        if case let .renamed(id) = self { id } else { nil }
    }
}

/// A plant as stored.
public struct StoredPlant: Sendable, Equatable {
    /// The store's key for the plant; never reused, even after the plant is deleted.
    public var id: Int64
    /// The plant's name, unique and case-sensitive.
    public var name: String
    /// The plant's sensor addresses, in the order they were given.
    public var sensors: [String]
    /// When the plant was added, to the millisecond.
    public var createdAt: Date

    /// Creates a plant value.
    public init(id: Int64, name: String, sensors: [String], createdAt: Date) {
        self.id = id
        self.name = name
        self.sensors = sensors
        self.createdAt = createdAt
    }
}
