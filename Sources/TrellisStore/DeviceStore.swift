import Foundation
import TrellisCore

/// The device fleet: the registry, models and their builds, and each device's log.
///
/// Every mutation is one atomic database operation (insert-if-absent under the registry cap,
/// conditional updates, counters, capped appends), so several relays may share one store.
public protocol DeviceStore: Sendable {
    /// Registers `id` unless known, while the registry holds fewer than `maxDevices`.
    func registerDevice(id: String, maxDevices: Int, at: Date) async throws -> DeviceUpdate

    /// Registers `id` as ``registerDevice(id:maxDevices:at:)`` does and sets its powerstate.
    func recordDeviceStatus(id: String, powerstate: Powerstate, maxDevices: Int, at: Date) async throws -> DeviceUpdate

    /// Registers `id` as ``registerDevice(id:maxDevices:at:)`` does and applies the members the
    /// telemetry reports.
    func recordTelemetry(id: String, telemetry: DeviceTelemetry, maxDevices: Int, at: Date) async throws -> DeviceUpdate

    /// A device, `nil` when unknown.
    func device(id: String) async throws -> DeviceRecord?

    /// Devices sorted by id, optionally only those of one model or powerstate.
    func devices(modelID: String?, powerstate: Powerstate?) async throws -> [DeviceRecord]

    /// Changes a device's name and/or model (`nil`: leave; `.some(nil)`: clear) in one statement.
    func updateDevice(id: String, name: String??, modelID: String??) async throws -> DeviceEdit

    /// Forgets a device and its log.
    /// - Returns: the device as it was, `nil` when unknown.
    func deleteDevice(id: String) async throws -> DeviceRecord?

    /// Appends an entry to a device's log, keeping its newest `limit`; written behind (the call
    /// returns once queued). Entries of a device that is no longer registered are dropped.
    func appendDeviceLog(device: String, entry: DeviceLogEntry, limit: Int) async throws

    /// The newest `limit` entries at or after `since`, oldest first (queued entries included).
    func deviceLog(device: String, since: Date?, limit: Int) async throws -> [DeviceLogEntry]

    /// Creates a model unless the name is taken.
    /// - Returns: the new model, `nil` when a model has that name.
    func createModel(name: String, at: Date) async throws -> ModelRecord?

    /// A model with its devices, `nil` when unknown.
    func model(id: String) async throws -> ModelRecord?

    /// Every model, oldest first.
    func models() async throws -> [ModelRecord]

    /// Renames a model unless another has that name.
    func renameModel(id: String, name: String) async throws -> ModelEdit

    /// Deletes a model and its builds; its devices become unassigned.
    /// - Returns: the devices that were assigned to it, `nil` when the model is unknown.
    func deleteModel(id: String) async throws -> [String]?

    /// Stores a new build of a model's code, numbered one past the model's latest.
    /// - Returns: its number, `nil` when the model is unknown.
    func addBuild(model: String, deviceCode: String, agentCode: String, at: Date) async throws -> Int?

    /// A build of a model, or its latest when `build` is nil; `nil` when there is none.
    func codeRevision(model: String, build: Int?) async throws -> CodeRevision?

    /// A model's builds, oldest first; `nil` when the model is unknown.
    func builds(model: String) async throws -> [BuildSummary]?

    /// How many devices are registered.
    func deviceCount() async throws -> Int

    /// The devices whose latest status is offline, each with when it went offline; a device that
    /// never sent a status is not among them (what `device_offline` notifications watch).
    func offlineDevices() async throws -> [OfflineDevice]
}

/// A device offline since a moment.
public struct OfflineDevice: Sendable, Hashable {
    public var id: String
    public var name: String?
    public var since: Date

    public init(id: String, name: String?, since: Date) {
        (self.id, self.name, self.since) = (id, name, since)
    }
}

/// What a device message did to the registry.
public struct DeviceUpdate: Sendable, Equatable {
    /// The device after the change; `nil` when it is unknown and the registry is full.
    public var device: DeviceRecord?
    /// The device was registered by this message.
    public var registered: Bool
    /// Something stored changed (registration included).
    public var changed: Bool

    public init(device: DeviceRecord?, registered: Bool, changed: Bool) {
        self.device = device
        self.registered = registered
        self.changed = changed
    }
}

/// What ``DeviceStore/updateDevice(id:name:modelID:)`` did.
public enum DeviceEdit: Sendable, Equatable {
    case updated(before: DeviceRecord, after: DeviceRecord)
    case deviceNotFound
    case modelNotFound
}

/// What ``DeviceStore/renameModel(id:name:)`` did.
public enum ModelEdit: Sendable, Equatable {
    case renamed(ModelRecord)
    case notFound
    case nameTaken
}

/// The model an ``DeviceStore/updateDevice(id:name:modelID:)`` asks for, read once for every
/// backend: `nil` keeps the model, `.some(nil)` clears it, an id names a model row by its number.
package enum DeviceModelChange: Sendable, Equatable {
    case keep
    case clear
    case set(Int64)
    /// An id no model can have (not `model-<n>`): the edit finds no model.
    case malformed

    package init(_ modelID: String??) {
        switch modelID {
        case .none: self = .keep
        case .some(.none): self = .clear
        case let .some(.some(model)): self = ModelIdentifier.number(model).map(Self.set) ?? .malformed
        }
    }

    /// Whether the edit sets the model column (to a number or to NULL).
    package var setsModel: Bool { self != .keep }
    /// The model number written, when one is.
    package var number: Int64? { if case let .set(number) = self { number } else { nil } }
}
