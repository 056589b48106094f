import Foundation
import TrellisCore
import TrellisMQTTTypes

/// `trellis/request/trace`: what happened to one message, from the traffic the relay keeps in
/// memory (``TrafficWatch``: the last 256 messages, 128 KiB). Asked with `{"id":"…"}`,
/// a request's id (plant-tracker `ID`, JSON `transaction`), a client, a topic or an event's number;
/// answered with every kept event it names, oldest first: `{"events":[…],"relay":"…","kept":N}`.
/// `{"topic":"…","at":"…"}` names the message a dead letter was made of (received that second).
///
/// Operators only: the events hold every client's payloads. In a share group, the relay that takes
/// the request answers from its own traffic.
public struct TraceService: Sendable {
    let settings: RelaySettings

    public init(settings: RelaySettings) { self.settings = settings }

    /// The most events one answer carries.
    public static let maximumEvents = 200

    public var routes: [Route] {
        let trace = JSONAction("", access: .operators(may: "trace messages")) { request, call in
            Self.trace(request, call: call)
        }
        return JSONService("trace", settings: settings, actions: [trace]).routes
    }

    struct Answer: Encodable, Sendable {
        var events: [WatchEvent]
        var relay: String
        var kept: Int
    }

    static func trace(_ request: JSONRequest, call: JSONCall) -> JSONResult {
        if let error = request.requireOnly(["id", "topic", "at", "limit"]) { return JSONResult(.error(error)) }
        let id: String?
        let topic: String?
        let at: String?
        let limit: Int?
        switch (
            request.optionalString("id"), request.optionalString("topic"), request.optionalString("at"),
            request.optionalInteger("limit", in: 1...maximumEvents)
        ) {
        case let (.success(read), .success(readTopic), .success(readAt), .success(readLimit)):
            (id, topic, at, limit) = (read, readTopic, readAt, readLimit)
        case let (.failure(error), _, _, _), let (_, .failure(error), _, _), let (_, _, .failure(error), _),
            let (_, _, _, .failure(error)):
            return JSONResult(.error(error))
        }
        let second = at.flatMap(ISO8601Time.parse).map { Int($0.timeIntervalSince1970) }
        guard id != nil || topic != nil else {
            return .error(
                .invalidRequest,
                "name the message: \"id\" (a request id, client, topic or event number) or \"topic\" and \"at\"")
        }
        if at != nil, second == nil { return .error(.invalidRequest, "\"at\" must be an ISO 8601 time") }
        let watch = call.context.watch
        let events = watch.trace(with: call.context.settings.watchDescriber, limit: limit ?? maximumEvents) { event in
            if let id, !event.isNamed(by: id) { return false }
            if let topic, event.topic != topic { return false }
            if let second, ISO8601Time.parse(event.at).map({ Int($0.timeIntervalSince1970) }) != second { return false }
            return true
        }
        return .ok(Answer(events: events, relay: call.context.settings.clientID, kept: watch.keptCount))
    }
}
