import Foundation
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// The browse service: `ROOT`, `DRILL` and `DETAIL` over every entity Trellis holds, answered
/// with a table model, on `trellis/request/browse` (and the per-client form, and a v5 Response
/// Topic) in the JSON envelope.
///
/// Entities are found by PERM_ID only; a REFCON is compared with its PERM_ID and never used to
/// look anything up, so a forged one cannot reach anything the PERM_ID could not.
public struct BrowseService: Sendable {
    let settings: RelaySettings

    public init(settings: RelaySettings) {
        self.settings = settings
    }

    /// The service's entries of the routing table: the shared and the per-client request topic.
    public var routes: [Route] {
        JSONService(
            "browse", settings: settings,
            actions: [
                JSONAction("") { [self] request, call in await perform(request, call: call) }
            ]
        ).routes
    }

    func perform(_ request: JSONRequest, call: JSONCall) async -> JSONResult {
        let parsed: BrowseRequest
        switch BrowseRequest.parse(request) {
        case let .failure(error): return JSONResult(.error(error))
        case let .success(value): parsed = value
        }
        do {
            switch parsed {
            case let .root(offset, limit):
                return .ok(try await root(offset: offset, limit: limit, store: call.context.store))
            case let .drill(targets): return .ok(try await drill(targets, store: call.context.store))
            case let .detail(targets): return .ok(try await detail(targets, store: call.context.store))
            }
        } catch {
            call.context.logger.error("browse failed: \(error)")
            return .storeFailure(topic: "\(settings.trellisPrefix)/request/browse", at: call.context.now)
        }
    }

    /// One page of top-level entities with the total over all pages.
    func root(offset: Int, limit: Int, store: any TrellisStore) async throws -> BrowseTable {
        let total = try await store.browseRootCount()
        let refs = try await store.browseRoot(offset: offset, limit: limit)
        let facts = try await store.browseFacts(refs, detail: false)
        return BrowseTable(
            columns: BrowseTable.navigationColumns,
            rows: refs.compactMap { facts[$0].map(BrowsePresenter.navigationRow) }, total: total)
    }

    /// The children and grandchildren of the named entities, each row once.
    func drill(_ targets: [BrowseTarget], store: any TrellisStore) async throws -> BrowseTable {
        let (refs, missing) = try await existing(targets, detail: false, store: store)
        var listed = Set<EntityRef>()
        var rows: [[String]] = []
        var level = refs.flatMap { $0.children }
        for _ in 0..<2 {
            let next = level.filter { listed.insert($0).inserted }
            let facts = try await store.browseFacts(next, detail: false)
            rows += next.compactMap { facts[$0].map(BrowsePresenter.navigationRow) }
            level = next.compactMap { facts[$0] }.flatMap(\.children)
        }
        return BrowseTable(columns: BrowseTable.navigationColumns, rows: rows, missing: missing)
    }

    /// Every column of the named entities.
    func detail(_ targets: [BrowseTarget], store: any TrellisStore) async throws -> BrowseTable {
        let (facts, missing) = try await existing(targets, detail: true, store: store)
        return BrowseTable(
            columns: BrowseTable.detailColumns, rows: facts.map(BrowsePresenter.detailRow), missing: missing)
    }

    /// The facts of the targets that exist, in request order without repeats, and the others with their reason.
    private func existing(_ targets: [BrowseTarget], detail: Bool, store: any TrellisStore)
        async throws -> ([BrowseFacts], [BrowseMissing])
    {
        var missing: [BrowseMissing] = []
        var refs: [EntityRef] = []
        for target in targets {
            switch target.resolve() {
            case let .failure(reason): missing.append(reason)
            case let .success(ref): if !refs.contains(ref) { refs.append(ref) }
            }
        }
        let facts = try await store.browseFacts(refs, detail: detail)
        var found: [BrowseFacts] = []
        for ref in refs {
            if let entity = facts[ref] {
                found.append(entity)
            } else {
                missing.append(BrowseMissing(permID: ref.permID, reason: "no such entity"))
            }
        }
        return (found, missing)
    }
}
