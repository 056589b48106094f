import Foundation
import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// The plant catalog's JSON services: `catalog/search|get`, per-client `likes/…` and `boards/…`,
/// `plants/link|unlink`, which tie a tracked plant to a species for care alerts, and `plants/history`.
///
/// Requests are validated by `CatalogRequest` before the store is touched; each change is one
/// store operation (insert-if-absent for likes and board items, conditional upserts for boards).
public struct CatalogActions: Sendable {
    let settings: RelaySettings
    let limits: CatalogLimits
    /// The live side of the catalog: starter import, care judgement and alert topics.
    let catalog: CatalogService

    public init(catalog: CatalogService, limits: CatalogLimits = CatalogLimits()) {
        self.settings = catalog.settings
        self.limits = limits
        self.catalog = catalog
    }

    /// The entries of the routing table of all four services.
    public var routes: [Route] {
        JSONService.routes(of: CatalogRequest.actions, limits: limits, settings: settings) { [self] request, call in
            await perform(request, call: call)
        }
    }

    /// Carries out one request read by its action; a store failure answers `internal_error` and
    /// is dead-lettered as `store_error`.
    func perform(_ parsed: CatalogRequest, call: JSONCall) async -> JSONResult {
        do {
            // The history reads readings only: no starter catalog is needed for it.
            if case let .history(request) = parsed { return try await history(request, context: call.context) }
            await catalog.ensureStarterCatalog(call.context)
            return try await perform(parsed, client: call.client, context: call.context)
        } catch {
            call.context.logger.error("\(call.service)/\(call.action) failed: \(error)")
            return .storeFailure(
                topic: "\(settings.trellisPrefix)/request/\(call.service)/\(call.action)", at: call.context.now)
        }
    }

    private func perform(_ request: CatalogRequest, client: String?, context: HandlerContext) async throws -> JSONResult
    {
        let store = context.store
        // `likes` and `boards` only parse on the per-client form, so `owner` is set for them.
        let owner = client ?? ""
        switch request {
        case let .search(filter, seed, cursor, limit, unseenOnly):
            let seed = seed ?? UInt64.random(in: 0...CatalogShuffle.maximumSeed)
            let page = try await store.searchSpecies(
                CatalogSearch(
                    filter: filter, seed: seed, after: cursor, limit: limit,
                    client: client, unseenOnly: unseenOnly))
            return .ok(SearchReply(results: page.species, nextCursor: page.next?.encoded, seed: seed))

        case let .get(symbol):
            guard let species = try await store.species(symbol: symbol) else { return Self.noSpecies(symbol) }
            return .ok(SpeciesWithCare(species: species, care: CareAdvice(for: species)))

        case let .addLike(symbol):
            switch try await store.addLike(client: owner, symbol: symbol, at: context.now) {
            case .added: return .ok(LikeReply(liked: symbol))
            case .alreadyLiked: return .error(.conflict, "\(owner) likes \(symbol) already")
            case .unknownSpecies: return Self.noSpecies(symbol)
            }

        case let .removeLike(symbol):
            guard try await store.removeLike(client: owner, symbol: symbol) else {
                return .error(.notFound, "\(owner) does not like \(symbol)")
            }
            return .ok(UnlikeReply(unliked: symbol))

        case .listLikes:
            return .ok(LikesReply(likes: try await store.likes(client: owner)))

        default:
            return try await performBoardsAndLinks(request, owner: owner, context: context)
        }
    }

    static func noSpecies(_ symbol: String) -> JSONResult {
        .error(.notFound, "the catalog has no species \(symbol)")
    }
}

/// `data` of `catalog/search`.
struct SearchReply: Encodable, Sendable {
    var results: [Species]
    var nextCursor: String?
    var seed: UInt64

    enum CodingKeys: String, CodingKey {
        case results, seed
        case nextCursor = "next_cursor"
    }

    func encode(to encoder: any Encoder) throws {
        try encoder.encodeEveryKey([CodingKeys.results: results, .nextCursor: nextCursor, .seed: seed])
    }
}

/// `data` of `catalog/get`: the species' members and its `care`.
struct SpeciesWithCare: Encodable, Sendable {
    var species: Species
    var care: CareAdvice

    enum CodingKeys: String, CodingKey { case care }

    func encode(to encoder: any Encoder) throws {
        try species.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(care, forKey: .care)
    }
}

struct LikeReply: Encodable, Sendable { var liked: String }
struct UnlikeReply: Encodable, Sendable { var unliked: String }
struct LikesReply: Encodable, Sendable { var likes: [Species] }
