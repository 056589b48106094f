import TrellisMQTT

/// One entry of the routing table: a topic filter, the QoS to subscribe with, and the handler
/// that owns every message matching it.
public struct Route: Sendable {
    public var filter: TopicFilter
    public var qos: QoS
    public var handler: any MessageHandler
    /// The service the route belongs to, for statistics (`plant`, `buttons`, …).
    public var service: String

    public init(_ filter: String, qos: QoS = .atLeastOnce, service: String? = nil, handler: any MessageHandler) {
        self.filter = TopicFilter(filter)
        self.qos = qos
        self.handler = handler
        self.service = service ?? String(filter.prefix { $0 != "/" })
    }
}

/// The relay's single routing table: topic filters to handlers. Services plug in by adding
/// routes; the relay subscribes to exactly these filters and nothing else, and hands each
/// message to every route whose filter matches it.
public struct RoutingTable: Sendable {
    public private(set) var routes: [Route] = []

    public init(_ routes: [Route] = []) {
        self.routes = routes
    }

    /// Adds routes; earlier routes win when two filters match the same topic.
    public mutating func add(_ more: [Route]) {
        routes.append(contentsOf: more)
    }

    /// The first route matching `topic`, with its wildcard captures.
    public func route(for topic: String) -> (route: Route, captures: [String])? {
        for route in routes {
            if let captures = route.filter.match(topic) { return (route, captures) }
        }
        return nil
    }

    /// Every route matching `topic`, in table order, each with its wildcard captures. As MQTT
    /// delivers a message to every matching subscription, the relay hands it to every matching
    /// route: a sensor reading is stored by the plant service and checked by the care alerts.
    public func routes(for topic: String) -> [(route: Route, captures: [String])] {
        routes.compactMap { route in route.filter.match(topic).map { (route, $0) } }
    }

    /// The subscriptions the relay makes: one per distinct filter, with no-local so that
    /// Trellis never hears its own publishes.
    public var subscriptions: [MQTTSubscription] {
        var seen = Set<String>()
        return routes.compactMap { route in
            guard seen.insert(route.filter.text).inserted else { return nil }
            return MQTTSubscription(route.filter.text, qos: route.qos, noLocal: true)
        }
    }
}
