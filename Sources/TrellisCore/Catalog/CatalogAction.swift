/// One action of the plant catalog's JSON services (`catalog`, `likes`, `boards`, `plants`): a
/// ``JSONActionSpec`` whose request is read into a ``CatalogRequest``. `likes` and `boards` belong
/// to one client each, so only the per-client form may send them.
public typealias CatalogAction = JSONActionSpec<CatalogRequest, CatalogLimits>

extension JSONActionSpec where Request == CatalogRequest, Limits == CatalogLimits {
    init(
        _ service: String, _ name: String,
        read: @escaping @Sendable (CatalogRequestReader, _ perClient: Bool) throws -> CatalogRequest
    ) {
        let access: JSONActionAccess = CatalogRequest.perClientServices.contains(service) ? .ownClient : .anyone
        self.init(service, name, access: access) { input in
            try read(CatalogRequestReader(request: input.request, limits: input.limits), input.perClient)
        }
    }
}

extension CatalogRequest {
    /// Services whose actions belong to one client: only the per-client form may use them.
    static let perClientServices: Set<String> = ["likes", "boards"]

    /// Every action, service by service, in the order docs/catalog.md lists them: the one list the
    /// routes, the per-client rule, the `unknown_action` answer and the docs table (checked by a
    /// test) follow; what an action does is the relay's answer to the ``CatalogRequest`` it returns.
    public static let actions = JSONActionList<CatalogRequest, CatalogLimits>([
        CatalogAction("catalog", "search") { reader, perClient in try reader.search(perClient: perClient) },
        CatalogAction("catalog", "get") { reader, _ in
            .get(symbol: try reader.only(["symbol"]) { try reader.symbol("symbol") })
        },
        CatalogAction("likes", "add") { reader, _ in
            .addLike(symbol: try reader.only(["symbol"]) { try reader.symbol("symbol") })
        },
        CatalogAction("likes", "remove") { reader, _ in
            .removeLike(symbol: try reader.only(["symbol"]) { try reader.symbol("symbol") })
        },
        CatalogAction("likes", "list") { reader, _ in try reader.only([]) { .listLikes } },
        CatalogAction("boards", "create") { reader, _ in
            try reader.only(["name", "description", "public"]) {
                .createBoard(
                    name: try reader.boardName(required: true)!, description: try reader.boardDescription() ?? "",
                    isPublic: try reader.bool("public") ?? false)
            }
        },
        CatalogAction("boards", "update") { reader, _ in
            try reader.only(["board", "name", "description", "public"]) {
                .updateBoard(
                    board: try reader.board(), name: try reader.boardName(required: false),
                    description: try reader.boardDescription(), isPublic: try reader.bool("public"))
            }
        },
        CatalogAction("boards", "delete") { reader, _ in
            .deleteBoard(board: try reader.only(["board"]) { try reader.board() })
        },
        CatalogAction("boards", "add") { reader, _ in
            try reader.only(["board", "symbols"]) {
                .addToBoard(board: try reader.board(), symbols: try reader.symbols())
            }
        },
        CatalogAction("boards", "remove") { reader, _ in
            try reader.only(["board", "symbols"]) {
                .removeFromBoard(board: try reader.board(), symbols: try reader.symbols())
            }
        },
        CatalogAction("boards", "list") { reader, _ in try reader.only([]) { .listBoards } },
        CatalogAction("boards", "get") { reader, _ in
            try reader.only(["board", "owner"]) {
                .getBoard(board: try reader.board(), owner: try reader.optionalString("owner"))
            }
        },
        CatalogAction("plants", "link") { reader, _ in
            try reader.only(["plant", "symbol"]) {
                .link(plant: try reader.plant(), symbol: try reader.symbol("symbol"))
            }
        },
        CatalogAction("plants", "unlink") { reader, _ in
            .unlink(plant: try reader.only(["plant"]) { try reader.plant() })
        },
        CatalogAction("plants", "history") { reader, _ in try reader.history() }
    ])
}
