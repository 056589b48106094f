import Foundation
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// Boards (per client) and plant links.
extension CatalogActions {
    func performBoardsAndLinks(_ request: CatalogRequest, owner: String, context: HandlerContext) async throws
        -> JSONResult
    {
        let store = context.store
        switch request {
        case let .createBoard(name, description, isPublic):
            switch try await store.createBoard(
                client: owner, name: name, description: description, isPublic: isPublic,
                maxBoards: limits.boardsPerClient, at: context.now)
            {
            case let .created(board): return .ok(BoardRecord(board))
            case .nameTaken: return .error(.conflict, "\(owner) has a board named \"\(name)\" already")
            case .tooManyBoards:
                return .error(.tooLarge, "\(owner) has \(limits.boardsPerClient) boards, the most one client keeps")
            }

        case let .updateBoard(id, name, description, isPublic):
            switch try await store.updateBoard(
                client: owner, id: id, name: name, description: description, isPublic: isPublic)
            {
            case let .updated(board): return .ok(BoardRecord(board))
            case .notFound: return Self.noBoard(id, owner: owner)
            case .nameTaken: return .error(.conflict, "\(owner) has another board named \"\(name ?? "")\"")
            }

        case let .deleteBoard(id):
            guard try await store.deleteBoard(client: owner, id: id) else { return Self.noBoard(id, owner: owner) }
            return .ok(DeletedBoard(deleted: id))

        case let .addToBoard(id, symbols):
            guard
                let outcome = try await store.addToBoard(
                    client: owner, id: id, symbols: symbols,
                    maxItems: limits.speciesPerBoard)
            else {
                return Self.noBoard(id, owner: owner)
            }
            if !outcome.unknown.isEmpty {
                return .error(
                    .notFound,
                    "the catalog has no species \(outcome.unknown.joined(separator: ", ")); nothing was added")
            }
            if outcome.tooMany {
                return .error(.tooLarge, "a board holds at most \(limits.speciesPerBoard) species; nothing was added")
            }
            return .ok(BoardAddReply(board: id, added: outcome.added, alreadyPresent: outcome.alreadyPresent))

        case let .removeFromBoard(id, symbols):
            guard let outcome = try await store.removeFromBoard(client: owner, id: id, symbols: symbols) else {
                return Self.noBoard(id, owner: owner)
            }
            return .ok(BoardRemoveReply(board: id, removed: outcome.removed, notPresent: outcome.notPresent))

        case .listBoards:
            return .ok(BoardList(boards: try await store.boards(client: owner).map(BoardRecord.init)))

        case let .getBoard(id, boardOwner):
            guard let detail = try await store.board(id: id, owner: boardOwner, viewer: owner) else {
                return Self.noBoard(id, owner: boardOwner ?? owner)
            }
            var record = BoardRecord(detail.board)
            record.species = detail.species
            return .ok(record)

        case let .link(plant, symbol):
            switch try await store.linkPlant(plant: plant, symbol: symbol, at: context.now) {
            case .unknownPlant: return .error(.notFound, "the plant tracker has no plant \"\(plant)\"")
            case .unknownSpecies: return Self.noSpecies(symbol)
            case .linked:
                var output = HandlerOutput()
                if let linked = try await store.linkedPlant(plant: plant) {
                    output = try await catalog.judge(linked, context: context)
                }
                return .ok(LinkReply(plant: plant, symbol: symbol), output: output)
            }

        case let .unlink(plant):
            guard try await store.unlinkPlant(plant: plant) else {
                return .error(.notFound, "the plant \"\(plant)\" is not linked to a species")
            }
            let cleared = MQTTMessage(
                topic: catalog.alertTopic(plant: plant), payload: [], qos: .atLeastOnce, retain: true)
            return .ok(UnlinkReply(unlinked: plant), output: HandlerOutput(publishes: [cleared]))

        default:
            preconditionFailure("catalog, likes and plants requests are answered before boards")
        }
    }

    static func noBoard(_ id: Int64, owner: String) -> JSONResult {
        .error(.notFound, "\(owner) has no board \(id) that you may see")
    }
}

/// A board as replies show it; `species` only in `boards/get`.
struct BoardRecord: Encodable, Sendable {
    var id: Int64
    var owner: String
    var name: String
    var description: String
    var isPublic: Bool
    var count: Int
    var createdAt: String
    var species: [Species]?

    init(_ board: Board) {
        id = board.id
        owner = board.owner
        name = board.name
        description = board.description
        isPublic = board.isPublic
        count = board.count
        createdAt = ISO8601Time.format(board.createdAt)
    }

    enum CodingKeys: String, CodingKey {
        case id, owner, name, description, count, species
        case isPublic = "public"
        case createdAt = "created_at"
    }
}

struct BoardList: Encodable, Sendable { var boards: [BoardRecord] }
struct DeletedBoard: Encodable, Sendable { var deleted: Int64 }

struct BoardAddReply: Encodable, Sendable {
    var board: Int64
    var added: [String]
    var alreadyPresent: [String]
    enum CodingKeys: String, CodingKey {
        case board, added
        case alreadyPresent = "already_present"
    }
}

struct BoardRemoveReply: Encodable, Sendable {
    var board: Int64
    var removed: [String]
    var notPresent: [String]
    enum CodingKeys: String, CodingKey {
        case board, removed
        case notPresent = "not_present"
    }
}

struct LinkReply: Encodable, Sendable { var plant: String; var symbol: String }
struct UnlinkReply: Encodable, Sendable { var unlinked: String }
