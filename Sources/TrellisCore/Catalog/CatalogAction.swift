/// One action of the plant catalog's JSON services (`catalog`, `likes`, `boards`, `plants`), declared
/// once: its service and name and how its request is read. ``CatalogAction/all`` is the one list the
/// routes, the `unknown_action` answer and docs/catalog.md's tables (checked by a test) follow; what an
/// action does is the relay's answer to the ``CatalogRequest`` it returns.
public struct CatalogAction: Sendable {
    public let service: String
    public let name: String
    let read: @Sendable (CatalogRequestReader, _ perClient: Bool) throws -> CatalogRequest

    init(_ service: String, _ name: String, read: @escaping @Sendable (CatalogRequestReader, _ perClient: Bool) throws -> CatalogRequest) {
        self.service = service
        self.name = name
        self.read = read
    }

    /// `service/action`, as the topics and the docs name it.
    public var path: String { "\(service)/\(name)" }

    /// Every action, service by service, in the order `unknown_action` lists them.
    public static let all: [CatalogAction] = [
        CatalogAction("catalog", "search") { reader, perClient in try reader.search(perClient: perClient) },
        CatalogAction("catalog", "get") { reader, _ in .get(symbol: try reader.only(["symbol"]) { try reader.symbol("symbol") }) },
        CatalogAction("likes", "add") { reader, _ in .addLike(symbol: try reader.only(["symbol"]) { try reader.symbol("symbol") }) },
        CatalogAction("likes", "remove") { reader, _ in .removeLike(symbol: try reader.only(["symbol"]) { try reader.symbol("symbol") }) },
        CatalogAction("likes", "list") { reader, _ in try reader.only([]) { .listLikes } },
        CatalogAction("boards", "create") { reader, _ in
            try reader.only(["name", "description", "public"]) {
                .createBoard(name: try reader.boardName(required: true)!, description: try reader.boardDescription() ?? "",
                             isPublic: try reader.bool("public") ?? false)
            }
        },
        CatalogAction("boards", "update") { reader, _ in
            try reader.only(["board", "name", "description", "public"]) {
                .updateBoard(board: try reader.board(), name: try reader.boardName(required: false),
                             description: try reader.boardDescription(), isPublic: try reader.bool("public"))
            }
        },
        CatalogAction("boards", "delete") { reader, _ in .deleteBoard(board: try reader.only(["board"]) { try reader.board() }) },
        CatalogAction("boards", "add") { reader, _ in
            try reader.only(["board", "symbols"]) { .addToBoard(board: try reader.board(), symbols: try reader.symbols()) }
        },
        CatalogAction("boards", "remove") { reader, _ in
            try reader.only(["board", "symbols"]) { .removeFromBoard(board: try reader.board(), symbols: try reader.symbols()) }
        },
        CatalogAction("boards", "list") { reader, _ in try reader.only([]) { .listBoards } },
        CatalogAction("boards", "get") { reader, _ in
            try reader.only(["board", "owner"]) { .getBoard(board: try reader.board(), owner: try reader.optionalString("owner")) }
        },
        CatalogAction("plants", "link") { reader, _ in
            try reader.only(["plant", "symbol"]) { .link(plant: try reader.plant(), symbol: try reader.symbol("symbol")) }
        },
        CatalogAction("plants", "unlink") { reader, _ in .unlink(plant: try reader.only(["plant"]) { try reader.plant() }) },
    ]

    /// The services, in the order of ``all``.
    public static var services: [String] {
        var seen = Set<String>()
        return all.map(\.service).filter { seen.insert($0).inserted }
    }

    /// The actions of `service`, in order.
    public static func actions(of service: String) -> [CatalogAction] { all.filter { $0.service == service } }
}
