import Foundation
import TrellisCore

/// One store operation as a value: what a handler's step waits for (see `HandlerSteps` in
/// TrellisRelay). The step names the operation; the relay's driver asks the store for its answer,
/// now when the store holds it in this process's memory (``StoreOperations/answerNow(_:)``), else
/// awaited (``StoreOperations/answer(_:)``), and feeds the answer to the next step. Each operation
/// is one of the store's own calls, so every change stays one operation the store makes atomic.
public enum StoreOperation: Sendable {
    /// ``SpamLedger/admitMessage(sender:at:limit:window:usingAllowance:)``.
    case admitMessage(sender: String, at: Date, limit: Int, window: TimeInterval, usingAllowance: Bool)
    /// ``SpamLedger/grantAllowance(sender:count:)``.
    case grantAllowance(sender: String, count: Int)
    /// ``PlantStore/sensorRecords(plant:)``.
    case sensorRecords(plant: String?)
    /// ``PlantStore/plants()``.
    case plants
    /// ``PlantStore/addPlant(name:sensors:maxPlants:)``.
    case addPlant(name: String, sensors: [String], maxPlants: Int)
    /// ``PlantStore/deletePlant(name:)``.
    case deletePlant(name: String)
    /// ``PlantStore/renamePlant(from:to:)``.
    case renamePlant(from: String, to: String)
}

/// What the store answered to a ``StoreOperation``: the result of the call it names, one case per
/// kind of result.
public enum StoreAnswer: Sendable, Equatable {
    case verdict(SpamVerdict)
    case granted
    /// Nil when the named plant does not exist.
    case sensorRecords([PlantSensorRecord]?)
    case plants([StoredPlant])
    case added(AddPlantOutcome)
    /// The deleted plant's id; nil when no plant had the name.
    case deleted(Int64?)
    case renamed(RenamePlantOutcome)
}

/// How a store answers a ``StoreOperation``: one API for every operation, answered now or awaited.
///
/// Class-bound: a store is one object shared by every handler, and a reference to it is copied by
/// one retain, where an existential of any type would be copied through its value witnesses on
/// every step that passes it on.
public protocol StoreOperations: AnyObject, PlantStore, SpamLedger {
    /// The answer to `operation` given without waiting, when the store holds it in this process's
    /// memory and nothing written waits ahead of it (SQLite's spam ledger and read cache); nil when
    /// the store must be asked (the default, and always on a store on a server). An operation
    /// answered now changes nothing but what the store keeps in memory (a sender's spam count), so
    /// a message handled by answers given now leaves nothing to commit.
    func answerNow(_ operation: StoreOperation) -> StoreAnswer?
}

extension StoreOperations {
    public func answerNow(_ operation: StoreOperation) -> StoreAnswer? {
        nil
    }

    /// The answer to `operation`, waited for: the store's call it names.
    public func answer(_ operation: StoreOperation) async throws -> StoreAnswer {
        switch operation {
        case let .admitMessage(sender, at, limit, window, usingAllowance):
            return .verdict(
                try await admitMessage(
                    sender: sender, at: at, limit: limit, window: window,
                    usingAllowance: usingAllowance))
        case let .grantAllowance(sender, count):
            try await grantAllowance(sender: sender, count: count)
            return .granted
        case let .sensorRecords(plant):
            return .sensorRecords(try await sensorRecords(plant: plant))
        case .plants:
            return .plants(try await plants())
        case let .addPlant(name, sensors, maxPlants):
            return .added(try await addPlant(name: name, sensors: sensors, maxPlants: maxPlants))
        case let .deletePlant(name):
            return .deleted(try await deletePlant(name: name))
        case let .renamePlant(old, new):
            return .renamed(try await renamePlant(from: old, to: new))
        }
    }
}
