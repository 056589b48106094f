/// A request to the plant catalog's JSON services (`catalog`, `likes`, `boards`, `plants`),
/// validated: every member checked for presence, type and range before the store is touched.
public enum CatalogRequest: Sendable, Equatable {
    /// `catalog/search`: one page of matches in the seed's order, after `cursor`.
    case search(filter: CatalogFilter, seed: UInt64?, cursor: CatalogCursor?, limit: Int, unseenOnly: Bool)
    /// `catalog/get`: one species with its care advice.
    case get(symbol: String)
    case addLike(symbol: String)
    case removeLike(symbol: String)
    case listLikes
    case createBoard(name: String, description: String, isPublic: Bool)
    case updateBoard(board: Int64, name: String?, description: String?, isPublic: Bool?)
    case deleteBoard(board: Int64)
    case addToBoard(board: Int64, symbols: [String])
    case removeFromBoard(board: Int64, symbols: [String])
    case listBoards
    case getBoard(board: Int64, owner: String?)
    /// `plants/link`: ties a plant of the plant tracker to a species.
    case link(plant: String, symbol: String)
    case unlink(plant: String)
    /// `plants/history`: a plant's or a sensor's readings over a range, in at most 1,000 points.
    case history(HistoryRequest)
}

/// The bounds of catalog requests and of what a client may keep.
public struct CatalogLimits: Sendable, Hashable {
    /// Most results in one page of a search.
    public var pageSize = 50
    /// Longest board name, in characters.
    public var boardNameLength = 40
    /// Longest board description, in characters.
    public var boardDescriptionLength = 500
    /// Most boards one client keeps.
    public var boardsPerClient = 100
    /// Most species on one board.
    public var speciesPerBoard = 500
    /// Most symbols one `boards/add` or `boards/remove` names.
    public var symbolsPerRequest = 100
    /// Longest plant name, in characters (the plant tracker's own limit is lower).
    public var plantNameLength = 64

    public init() {}
}
