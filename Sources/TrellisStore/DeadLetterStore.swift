import Foundation
import TrellisCore

/// Messages the relay could not handle, kept for inspection and capped in size.
public protocol DeadLetterStore: Sendable {
    /// Keeps a dead letter counted against `client` (``DeadLetterOwner``): of that client's letters
    /// only the newest `quota` are kept, so one client's flood evicts only its own letters, and of
    /// all letters only the newest ones (the store's cap).
    ///
    /// Written behind: the call returns once the letter is queued. Write failures are reported by
    /// the next `flush()`.
    func recordDeadLetter(reason: String, topic: String, payload: [UInt8], at: Date, client: String, quota: Int)
        async throws

    /// The newest `limit` dead letters, newest first.
    func deadLetters(limit: Int) async throws -> [StoredDeadLetter]

    /// The dead letters `query` selects (reason, topic prefix, since, below an id), newest first,
    /// letters still queued behind included. Served by the indexes on `(reason, id)` and `(topic, id)`.
    func deadLetters(matching query: DeadLetterQuery) async throws -> [StoredDeadLetter]
}

extension DeadLetterStore {
    /// Keeps a dead letter of no client, under the store's cap alone.
    public func recordDeadLetter(reason: String, topic: String, payload: [UInt8], at: Date) async throws {
        try await recordDeadLetter(reason: reason, topic: topic, payload: payload, at: at, client: "", quota: .max)
    }
}

/// What every backend keeps unless told otherwise.
public enum StoreDefaults {
    /// The newest dead letters kept.
    public static let deadLetterLimit = 10_000
}

/// Row counts for metrics.
public protocol StoreStatistics: Sendable {
    /// How many rows of each kind the store holds, including writes still queued.
    func counts() async throws -> StoreCounts

    /// Seconds the oldest queued (write-behind) change has waited to be written; nil when none waits.
    func oldestUnwrittenChangeAge() async -> Double?

    /// Succeeds when a real write commits now, through the path real writes take (see
    /// the backends' `checkWritable(timeout:)`); throws the cause otherwise. For health checks.
    func checkWritable() async throws

    /// Succeeds when the database answers now, without writing anything; throws why not. For
    /// readiness probes, which must cost no write: SQLite reads one row; PostgreSQL opens one
    /// connection of its own (the pool's requests wait in silence while the server is away).
    func checkReachable() async throws

    /// Whether commits succeed, how many failed, and what waits unwritten; never writes or waits.
    func writeStatus() async -> StoreWriteStatus
}

/// Everything the relay keeps: the store its handlers are given.
public typealias TrellisStore = PlantStore & HistoryStore & ButtonStore & CatalogStore & DeviceStore & BrowseStore
    & DeadLetterStore & BridgeStore & BridgeCarriedStore & NotificationOutbox & DeliveryStore & SpamLedger
    & StoreOperations
    & StoreStatistics & StoreLifecycle

/// A dead letter as stored.
public struct StoredDeadLetter: Sendable, Equatable {
    /// The store's key; larger means recorded later.
    public var id: Int64
    /// Why the message was not handled, e.g. `invalid_op`.
    public var reason: String
    /// The topic the message arrived on.
    public var topic: String
    /// The message payload as received.
    public var payload: [UInt8]
    /// When the message was received, to the millisecond.
    public var receivedAt: Date

    /// Creates a dead-letter value.
    public init(id: Int64, reason: String, topic: String, payload: [UInt8], receivedAt: Date) {
        (self.id, self.reason, self.topic, self.payload, self.receivedAt) = (id, reason, topic, payload, receivedAt)
    }
}

/// Row counts of a store.
public struct StoreCounts: Sendable, Equatable {
    /// Plants.
    public var plants: Int
    /// Distinct sensor addresses assigned to plants.
    public var sensors: Int
    /// Sensors with a stored latest reading (including sensors of deleted plants).
    public var sensorReadings: Int
    /// Buttons pressed at least once.
    public var buttons: Int
    /// Clients ever seen (status or registration).
    public var clients: Int
    /// Registrations of clients for buttons.
    public var registrations: Int
    /// Dead letters kept.
    public var deadLetters: Int
    /// Species in the plant catalog.
    public var species: Int
    /// Devices in the fleet registry.
    public var devices: Int
    /// Models of the fleet.
    public var models: Int
    /// Log entries kept over every device.
    public var deviceLogEntries: Int

    /// Creates a counts value.
    public init(
        plants: Int, sensors: Int, sensorReadings: Int, buttons: Int,
        clients: Int, registrations: Int, deadLetters: Int, species: Int = 0,
        devices: Int = 0, models: Int = 0, deviceLogEntries: Int = 0
    ) {
        (self.plants, self.sensors, self.sensorReadings, self.buttons) = (plants, sensors, sensorReadings, buttons)
        (self.clients, self.registrations, self.deadLetters) = (clients, registrations, deadLetters)
        (self.species, self.devices, self.models) = (species, devices, models)
        self.deviceLogEntries = deviceLogEntries
    }
}
