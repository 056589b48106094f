import TrellisCore
import TrellisMQTTTypes
import TrellisStore

/// One entry of the routing table: a topic filter, the QoS to subscribe with, and the handler
/// that owns every message matching it.
///
/// A class, immutable: the table hands a message's routes out by reference, one retain each,
/// where a struct of closures and strings would be copied field by field on every message.
public final class Route: Sendable {
    public let filter: TopicFilter
    public let qos: QoS
    /// How the relay handles a message of this route.
    let handling: Handling
    /// The service the route belongs to, for statistics (`plant`, `buttons`, …).
    public let service: String
    /// A fallback route gets only the messages no other route matches (a JSON service's
    /// `unknown_action` answer, under the filters of its actions).
    public let fallback: Bool
    /// Whether the handler only reads for `message` (nil: never): it changes nothing but its
    /// sender's spam count, so a run of such messages may be handled at once, each answered as it
    /// would be alone (see ``RelayEngine/onlyReads(_:)``).
    public let onlyReads: (@Sendable (MQTTMessage) -> Bool)?

    /// A route's handler, in one of two forms.
    enum Handling: Sendable {
        /// Steps the engine drives (``HandlerSteps``): made fresh for each message from the route's
        /// wildcard captures and run while the store given (nil: none) answers each operation now;
        /// the last step comes back, with the steps when it waits. Steps handled in full stay on the
        /// stack as a value of their own type; only steps that wait are kept, for the rest.
        case steps(@Sendable (MQTTMessage, HandlerContext, (any StoreOperations)?) -> Begun)
        /// An async handler the engine awaits as a whole: a closure handler's closure itself, which
        /// spares every message a protocol witness and its async frame between the table and the service's code.
        case handler(@Sendable (MQTTMessage, HandlerContext) async -> HandlerOutput)
    }

    /// A route whose messages `handler` handles as a whole.
    public convenience init(
        _ filter: String, qos: QoS = .atLeastOnce, service: String? = nil, fallback: Bool = false,
        onlyReads: (@Sendable (MQTTMessage) -> Bool)? = nil, handler: any MessageHandler
    ) {
        let run: @Sendable (MQTTMessage, HandlerContext) async -> HandlerOutput
        if let closure = handler as? ClosureHandler {
            run = closure.body
        } else {
            run = { message, context in await handler.handle(message, context: context) }
        }
        self.init(filter, qos: qos, service: service, fallback: fallback, onlyReads: onlyReads, handling: .handler(run))
    }

    /// A route whose messages `handle` handles as a whole, given the topic level the filter's first
    /// `+` matched (a button, a client).
    public convenience init(
        _ filter: String, service: String,
        handleCaptured handle: @escaping @Sendable (MQTTMessage, String, HandlerContext) async -> HandlerOutput
    ) {
        self.init(
            filter, qos: .atLeastOnce, service: service, fallback: false, onlyReads: nil,
            handling: .handler { await handle($0, $1.captures[0], $1) })
    }

    /// A route whose messages go through the steps `steps` makes for each (``HandlerSteps``), from
    /// the route's wildcard captures.
    public convenience init<Steps: HandlerSteps>(
        _ filter: String, qos: QoS = .atLeastOnce, service: String? = nil,
        fallback: Bool = false, onlyReads: (@Sendable (MQTTMessage) -> Bool)? = nil,
        steps: @escaping @Sendable (_ captures: [String]) -> Steps
    ) {
        self.init(
            filter, qos: qos, service: service, fallback: fallback, onlyReads: onlyReads,
            handling: .steps { message, context, store in
                var made = steps(context.captures)
                switch made.start(message, context: context, answering: store) {
                case let .done(output): return .done(output)
                case let step: return .waiting(step, WaitingSteps(made))
                }
            })
    }

    /// How far a route's steps took a message before anything waited.
    enum Begun: Sendable {
        /// Handled: the handler's output.
        case done(HandlerOutput)
        /// Waits for what `step` asks; `steps` go on from there.
        case waiting(Step, WaitingSteps)
    }

    init(
        _ filter: String, qos: QoS, service: String?, fallback: Bool, onlyReads: (@Sendable (MQTTMessage) -> Bool)?,
        handling: Handling
    ) {
        self.filter = TopicFilter(filter)
        self.qos = qos
        self.handling = handling
        self.service = service ?? String(filter.prefix { $0 != "/" })
        self.fallback = fallback
        self.onlyReads = onlyReads
    }
}

/// Steps that wait, held by reference: an enum with an existential of any size in it would be
/// copied and destroyed through value witnesses on every message, the many handled at once included.
final class WaitingSteps: Sendable {
    let steps: any HandlerSteps

    init(_ steps: any HandlerSteps) {
        self.steps = steps
    }
}

/// The relay's single routing table: topic filters to handlers. Services plug in by adding
/// routes; the relay subscribes to exactly these filters and nothing else, and hands each
/// message to every route whose filter matches it.
public struct RoutingTable: Sendable {
    public private(set) var routes: [Route] = []
    /// Positions of the routes whose filter starts with a given literal level, in table order.
    private var byFirstLevel: [String: [Int]] = [:]
    /// Positions of the routes whose filter starts with a wildcard.
    private var wildcardFirst: [Int] = []
    /// The answer of ``routes(for:)`` for each topic that is itself a filter of the table (`rpi/torpi`),
    /// worked out as routes are added: the busiest topics are looked up rather than matched. Kept
    /// by the filter's length in bytes: a topic goes to the few filters of its length and is
    /// compared with them as bytes, with no hashing (which cost a third of the lookup's
    /// instructions on a message).
    private var literalTopics: [[LiteralTopic]] = []

    /// A filter without wildcards and the routes a topic spelled like it goes to.
    private struct LiteralTopic {
        var bytes: [UInt8]
        var matches: [(route: Route, captures: [String])]
    }

    public init(_ routes: [Route] = []) {
        add(routes)
    }

    /// Adds routes; earlier routes win when two filters match the same topic.
    public mutating func add(_ more: [Route]) {
        for route in more {
            if let first = route.filter.literalFirstLevel {
                byFirstLevel[first, default: []].append(routes.count)
            } else {
                wildcardFirst.append(routes.count)
            }
            routes.append(route)
        }
        literalTopics = []
        for route in routes where !route.filter.hasWildcard {
            let bytes = Array(route.filter.text.utf8)
            if literalTopics.count <= bytes.count {
                literalTopics += Array(repeating: [], count: bytes.count + 1 - literalTopics.count)
            }
            guard !literalTopics[bytes.count].contains(where: { $0.bytes == bytes }) else { continue }
            literalTopics[bytes.count].append(LiteralTopic(bytes: bytes, matches: resolved(route.filter.text)))
        }
    }

    /// The first route matching `topic`, with its wildcard captures.
    public func route(for topic: String) -> (route: Route, captures: [String])? {
        matching(topic, firstOnly: true).first
    }

    /// Every route matching `topic` in table order: only the routes indexed under its first
    /// level and those starting with a wildcard are tried, each against the levels split once.
    private func matching(_ topic: String, firstOnly: Bool = false) -> [(route: Route, captures: [String])] {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        let indexed = levels.first.flatMap { byFirstLevel[String($0)] } ?? []
        let candidates = wildcardFirst.isEmpty ? indexed : (indexed + wildcardFirst).sorted()
        var matches: [(route: Route, captures: [String])] = []
        for index in candidates {
            guard let captures = routes[index].filter.match(levels: levels) else { continue }
            matches.append((routes[index], captures))
            if firstOnly { break }
        }
        return matches
    }

    /// Every route matching `topic`, in table order, each with its wildcard captures. As MQTT
    /// delivers a message to every matching subscription, the relay hands it to every matching
    /// route: a sensor reading is stored by the plant service and checked by the care alerts.
    /// Fallback routes take part only when no other route matches.
    public func routes(for topic: String) -> [(route: Route, captures: [String])] {
        // Compared as bytes, not as strings (which compare by canonical equivalence): the topic must be
        // the filter's very bytes, or other routes' `+` captures would take the filter's spelling.
        var text = topic
        let literal = text.withUTF8 { bytes -> Int? in
            guard bytes.count < literalTopics.count else { return nil }
            return literalTopics[bytes.count].firstIndex {
                $0.bytes.withUnsafeBufferPointer { $0.sameBytes(as: bytes) }
            }
        }
        if let literal { return literalTopics[topic.utf8.count][literal].matches }
        return resolved(topic)
    }

    /// ``routes(for:)`` worked out by matching `topic` against the table.
    private func resolved(_ topic: String) -> [(route: Route, captures: [String])] {
        let matches = matching(topic)
        guard matches.contains(where: { $0.route.fallback }) else { return matches }
        let specific = matches.filter { !$0.route.fallback }
        return specific.isEmpty ? matches : specific
    }

    /// The subscriptions the relay makes: one per distinct filter, with no-local so that
    /// Trellis never hears its own publishes. A filter that another filter of the table covers
    /// (`trellis/request/devices/list` under `trellis/request/devices/+`) is not subscribed:
    /// Mosquitto delivers a message once per matching subscription, and the relay must see it once.
    public var subscriptions: [MQTTSubscription] {
        let filters = Set(routes.map(\.filter.text))
        var seen = Set<String>()
        return routes.compactMap { route in
            let text = route.filter.text
            guard seen.insert(text).inserted else { return nil }
            if filters.contains(where: { $0 != text && TopicFilter.covers($0, text) }) { return nil }
            let qos = routes.filter { $0.filter.text == text }.map(\.qos).max() ?? route.qos
            return MQTTSubscription(text, qos: qos, noLocal: true)
        }
    }
}

extension TopicFilter {
    /// Whether every topic `inner` matches is matched by `outer` too.
    static func covers(_ outer: String, _ inner: String) -> Bool {
        let outerLevels = outer.split(separator: "/", omittingEmptySubsequences: false)
        let innerLevels = inner.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in outerLevels.enumerated() {
            if level == "#" {
                // A leading wildcard does not match `$` topics.
                return index > 0 || !(innerLevels.first?.hasPrefix("$") ?? false)
            }
            guard index < innerLevels.count else { return false }
            let other = innerLevels[index]
            if level == "+" {
                if other == "#" { return false }
                if index == 0 && other.hasPrefix("$") { return false }
            } else if level != other {
                return false
            }
        }
        return outerLevels.count == innerLevels.count
    }
}
