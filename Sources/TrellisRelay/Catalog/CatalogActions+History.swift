import Foundation
import TrellisCore
import TrellisStore

/// `plants/history`: the readings of a plant (its sensors together) or of one sensor over a
/// range, as the ``HistoryPlan`` for the range and the raw retention says: at most 1,000 points,
/// from the raw readings when the range lies within their retention and the step is under an hour,
/// else from the hours.
extension CatalogActions {
    func history(_ request: HistoryRequest, context: HandlerContext) async throws -> JSONResult {
        let to = request.to ?? context.now
        guard request.from < to else {
            return .error(.invalidRequest, "\"from\" must come before \"to\" (now, when \"to\" is left out)")
        }
        let retention = context.settings.historyRetention
        let rawSince = context.now.addingTimeInterval(-Double(retention.rawDays) * 86_400)
        let plan = HistoryPlan(from: request.from, to: to, step: request.step, rawSince: rawSince)
        guard let points = try await context.store.history(of: request.subject, plan: plan) else {
            guard case let .plant(name) = request.subject else { return .error(.notFound, "no such plant") }
            return .error(.notFound, "no plant is named \"\(name)\"")
        }
        return .ok(HistoryReply(request.subject, from: request.from, to: to, plan: plan, points: points))
    }
}

/// The answer to `plants/history`.
struct HistoryReply: Encodable, Sendable {
    var plant: String?
    var sensor: String?
    var from: String
    var to: String
    var resolution: String
    var step: Int
    var points: [HistoryPoint]

    init(_ subject: HistorySubject, from: Date, to: Date, plan: HistoryPlan, points: [HistoryPoint]) {
        switch subject {
        case let .plant(name): plant = name
        case let .sensor(address): sensor = address
        }
        self.from = ISO8601Time.format(from)
        self.to = ISO8601Time.format(to)
        resolution = plan.resolution.rawValue
        step = plan.step
        self.points = points
    }
}
