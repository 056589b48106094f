import Foundation
import TrellisCore

/// The plant catalog: species, what each client was shown, likes, boards, plant ↔ species links
/// and the care-alert state of linked plants.
///
/// Every mutation is one atomic database operation, so several relays may share one store.
public protocol CatalogStore: Sendable {
    /// Inserts species, or replaces those whose symbol is stored (an absent image URL keeps the stored one).
    /// - Returns: how many were written.
    @discardableResult
    func upsertSpecies(_ species: [Species]) async throws -> Int

    /// Inserts `species` only when the catalog holds none, in one transaction.
    /// - Returns: how many were inserted (0 when the catalog was not empty).
    @discardableResult
    func seedCatalogIfEmpty(_ species: [Species]) async throws -> Int

    /// How many species the catalog holds.
    func speciesCount() async throws -> Int

    /// One species, `nil` when the symbol is unknown.
    func species(symbol: String) async throws -> Species?

    /// One page of a search in the seed's order, after the cursor's position. With `client`,
    /// `unseenOnly` leaves out species that client was shown, and the page is remembered as shown
    /// to it in the same transaction.
    func searchSpecies(_ search: CatalogSearch) async throws -> CatalogSearchPage

    /// Likes `symbol` for `client` unless it is liked already.
    func addLike(client: String, symbol: String, at: Date) async throws -> LikeOutcome
    /// - Returns: `false` when the client did not like the species.
    func removeLike(client: String, symbol: String) async throws -> Bool
    /// The species a client likes, most recently liked first.
    func likes(client: String) async throws -> [Species]

    /// Creates a board unless the client has one of that name, or `maxBoards` already.
    func createBoard(
        client: String, name: String, description: String, isPublic: Bool,
        maxBoards: Int, at: Date
    ) async throws -> CreateBoardOutcome
    /// Changes the given members of a client's board.
    func updateBoard(
        client: String, id: Int64, name: String?, description: String?,
        isPublic: Bool?
    ) async throws -> UpdateBoardOutcome
    /// - Returns: `false` when the client has no such board.
    func deleteBoard(client: String, id: Int64) async throws -> Bool
    /// Adds species to a client's board; those on it already are reported, not repeated.
    /// - Returns: `nil` when the client has no such board.
    func addToBoard(client: String, id: Int64, symbols: [String], maxItems: Int) async throws -> BoardAddOutcome?
    /// Removes species from a client's board.
    /// - Returns: `nil` when the client has no such board.
    func removeFromBoard(client: String, id: Int64, symbols: [String]) async throws -> BoardRemoveOutcome?
    /// A client's boards, oldest first, without their species.
    func boards(client: String) async throws -> [Board]
    /// A board with its species in the order added, when `viewer` may see it: its own, or a
    /// public one. With `owner`, the board must also belong to that client.
    func board(id: Int64, owner: String?, viewer: String) async throws -> BoardDetail?

    /// Ties a tracker plant to a species, replacing an earlier link.
    func linkPlant(plant: String, symbol: String, at: Date) async throws -> LinkOutcome
    /// Removes a plant's link and its alert state.
    /// - Returns: `false` when the plant was not linked.
    func unlinkPlant(plant: String) async throws -> Bool
    /// Linked plants that have `sensor`, with their species and every sensor's latest reading.
    func linkedPlants(sensor: String) async throws -> [LinkedPlant]
    /// One linked plant with its species and readings, `nil` when not linked.
    func linkedPlant(plant: String) async throws -> LinkedPlant?
    /// Makes `conditions` the plant's alert state in one transaction: conditions already held keep
    /// their `since`, new ones start at `at`, others are cleared. What `notifying` makes of the
    /// update is queued in the notification outbox in the same transaction.
    /// - Returns: the new state, and whether any alert started or cleared.
    func updateCareAlerts(
        plant: String, conditions: [CareCondition], at: Date,
        notifying: @escaping @Sendable (CareAlertUpdate) -> [PendingNotification]
    ) async throws -> CareAlertUpdate
}

extension CatalogStore {
    /// Updates a plant's alert state without queueing a notification.
    public func updateCareAlerts(plant: String, conditions: [CareCondition], at: Date) async throws
        -> CareAlertUpdate
    {
        try await updateCareAlerts(plant: plant, conditions: conditions, at: at) { _ in [] }
    }
}

/// A search as the store runs it.
public struct CatalogSearch: Sendable, Hashable {
    public var filter: CatalogFilter
    public var seed: UInt64
    /// Start after this position (`nil`: from the first result).
    public var after: CatalogCursor?
    /// At most this many results.
    public var limit: Int
    /// The client the results are shown to, on the per-client form.
    public var client: String?
    /// Leave out what `client` was shown before.
    public var unseenOnly: Bool

    public init(
        filter: CatalogFilter, seed: UInt64, after: CatalogCursor? = nil, limit: Int,
        client: String? = nil, unseenOnly: Bool = false
    ) {
        (self.filter, self.seed, self.after, self.limit, self.client) = (filter, seed, after, limit, client)
        self.unseenOnly = unseenOnly
    }
}

/// One page of a search.
public struct CatalogSearchPage: Sendable, Equatable {
    public var species: [Species]
    /// Where the next page starts; `nil` on the last page.
    public var next: CatalogCursor?

    public init(species: [Species], next: CatalogCursor?) {
        self.species = species
        self.next = next
    }
}

/// What ``CatalogStore/addLike(client:symbol:at:)`` did.
public enum LikeOutcome: Sendable, Equatable {
    case added
    case alreadyLiked
    case unknownSpecies
}

/// A board, without its species.
public struct Board: Sendable, Equatable, Codable {
    public var id: Int64
    public var owner: String
    public var name: String
    public var description: String
    public var isPublic: Bool
    /// How many species it holds.
    public var count: Int
    public var createdAt: Date

    public init(
        id: Int64, owner: String, name: String, description: String, isPublic: Bool, count: Int, createdAt: Date
    ) {
        (self.id, self.owner, self.name, self.description, self.isPublic) = (id, owner, name, description, isPublic)
        (self.count, self.createdAt) = (count, createdAt)
    }
}

/// A board with its species.
public struct BoardDetail: Sendable, Equatable {
    public var board: Board
    public var species: [Species]

    public init(board: Board, species: [Species]) {
        self.board = board
        self.species = species
    }
}

/// What ``CatalogStore/createBoard(client:name:description:isPublic:maxBoards:at:)`` did.
public enum CreateBoardOutcome: Sendable, Equatable {
    case created(Board)
    case nameTaken
    case tooManyBoards
}

/// What ``CatalogStore/updateBoard(client:id:name:description:isPublic:)`` did.
public enum UpdateBoardOutcome: Sendable, Equatable {
    case updated(Board)
    case notFound
    case nameTaken
}

/// What adding species to a board did.
public struct BoardAddOutcome: Sendable, Equatable {
    public var added: [String]
    public var alreadyPresent: [String]
    /// Symbols the catalog does not hold; when any, nothing was added.
    public var unknown: [String]
    /// True when the board would have held more than the limit; nothing was added.
    public var tooMany: Bool

    public init(added: [String], alreadyPresent: [String], unknown: [String] = [], tooMany: Bool = false) {
        (self.added, self.alreadyPresent, self.unknown, self.tooMany) = (added, alreadyPresent, unknown, tooMany)
    }
}

/// What removing species from a board did.
public struct BoardRemoveOutcome: Sendable, Equatable {
    public var removed: [String]
    public var notPresent: [String]

    public init(removed: [String], notPresent: [String]) {
        self.removed = removed
        self.notPresent = notPresent
    }
}

/// What ``CatalogStore/linkPlant(plant:symbol:at:)`` did.
public enum LinkOutcome: Sendable, Equatable {
    case linked
    case unknownPlant
    case unknownSpecies
}

/// A tracker plant tied to a species, with the latest reading of each of its sensors.
public struct LinkedPlant: Sendable, Equatable {
    public var plant: String
    public var species: Species
    /// Sensors that have reported, in the plant's sensor order.
    public var readings: [CareReading]

    public init(plant: String, species: Species, readings: [CareReading]) {
        (self.plant, self.species, self.readings) = (plant, species, readings)
    }
}

/// One active care alert.
public struct CareAlert: Sendable, Hashable {
    public var kind: CareAlertKind
    public var sensor: String
    public var value: Double
    public var limit: Double
    /// When the condition started.
    public var since: Date

    public init(kind: CareAlertKind, sensor: String, value: Double, limit: Double, since: Date) {
        (self.kind, self.sensor, self.value, self.limit, self.since) = (kind, sensor, value, limit, since)
    }
}

/// The result of ``CatalogStore/updateCareAlerts(plant:conditions:at:)``.
public struct CareAlertUpdate: Sendable, Equatable {
    /// Every active alert, by sensor then kind.
    public var alerts: [CareAlert]
    /// Whether an alert started or cleared.
    public var changed: Bool
    /// The alerts that started and cleared in this update, each as `kind:sensor` (what the
    /// notification rules send, docs/notifications.md).
    public var started: [String], cleared: [String]

    public init(alerts: [CareAlert], changed: Bool, started: [String] = [], cleared: [String] = []) {
        self.alerts = alerts
        self.changed = changed
        (self.started, self.cleared) = (started, cleared)
    }
}
