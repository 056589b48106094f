/// One rule of a bridge to an upstream broker: which topics cross, in which direction, under which
/// prefix, at which QoS, and whether retained messages keep their flag.
///
/// `out` rules carry local messages upstream: a local topic that matches ``filter`` is published
/// upstream as ``prefix`` followed by the topic (`sensors/x` → `site/home1/sensors/x`). `in` rules
/// carry upstream messages down: the upstream broker is subscribed to ``filter`` (written with the
/// prefix, as the upstream side names its topics), and the prefix is taken off again
/// (`site/home1/commands/x` → `commands/x`). A topic of an `in` rule that does not start with the
/// prefix is not carried.
public struct BridgeRule: Sendable, Hashable {
    public enum Direction: String, Sendable, CaseIterable {
        case out
        case `in`
    }

    public var direction: Direction
    public var filter: TopicFilter
    public var prefix: String
    /// 0 or 1: the QoS the message is published with on the other side.
    public var qos: Int
    /// Whether a retained message is published retained on the other side.
    public var retain: Bool

    public init(direction: Direction, filter: String, prefix: String = "", qos: Int = 1, retain: Bool = false) {
        self.direction = direction
        self.filter = TopicFilter(filter)
        self.prefix = prefix
        self.qos = qos
        self.retain = retain
    }

    /// The topic `topic` crosses to, or nil when this rule does not carry it.
    public func crossing(_ topic: String) -> String? {
        guard filter.match(topic) != nil else { return nil }
        switch direction {
        case .out:
            return prefix + topic
        case .in:
            guard topic.utf8.starts(with: prefix.utf8) else { return nil }
            let rest = String(topic.utf8.dropFirst(prefix.utf8.count))
            return rest.flatMap { $0.isEmpty ? nil : $0 }
        }
    }

    /// The filter of the topics on the other side: the prefix added (out) or taken off (in).
    public var crossedFilter: String {
        switch direction {
        case .out: prefix + filter.text
        case .in: filter.text.hasPrefix(prefix) ? String(filter.text.dropFirst(prefix.count)) : filter.text
        }
    }

    /// The rule in one line, its topics on both sides: `sensors/# → site/home1/sensors/#, qos 1`.
    public var summary: String {
        "\(filter.text) → \(crossedFilter), qos \(qos)\(retain ? ", retained stays retained" : "")"
    }

    /// What is wrong with the rule, each a sentence naming the member; empty when it may be used.
    public var problems: [String] {
        var problems: [String] = []
        if let problem = Self.filterProblem(filter.text) { problems.append("topic: \(problem)") }
        if let problem = Self.prefixProblem(prefix) { problems.append("prefix: \(problem)") }
        if direction == .in, !prefix.isEmpty, !filter.text.hasPrefix(prefix) {
            // Its local topics are what follows the prefix: a filter that does not spell the prefix
            // out (site/#, +/home1/#) would bring down topics no check of the local side could see.
            problems.append(
                "topic: an in rule's topic is the upstream one and starts with its prefix, written out: \(prefix)… (\(filter.text) does not)"
            )
        }
        if ![0, 1].contains(qos) { problems.append("qos: \(qos) is not allowed: use 0 or 1") }
        return problems
    }

    /// Why `text` cannot be a filter of a rule: empty, a wildcard inside a level, `#` not last,
    /// a NUL, or a topic of the broker's own (`$SYS`, `$share`).
    static func filterProblem(_ text: String) -> String? {
        if text.isEmpty { return "empty: name the topics to carry, such as sensors/#" }
        if text.utf8.contains(0) { return "contains a NUL character" }
        if text.hasPrefix("$") {
            return "\(text) is a broker's own topic ($SYS, $share), which a bridge does not carry"
        }
        let levels = text.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level.contains("#") && (level != "#" || index != levels.count - 1) {
                return "\(text): '#' must be a whole level and the last one"
            }
            if level.contains("+") && level != "+" { return "\(text): '+' must be a whole level" }
        }
        return nil
    }

    /// Why `text` cannot be a prefix: a wildcard, a NUL, a leading `$`, or not ending in `/`.
    static func prefixProblem(_ text: String) -> String? {
        guard !text.isEmpty else { return nil }
        if text.contains("+") || text.contains("#") { return "\(text) has a wildcard; a prefix is plain topic levels" }
        if text.utf8.contains(0) { return "contains a NUL character" }
        if text.hasPrefix("$") { return "\(text) starts with '$', which names a broker's own topics" }
        if !text.hasSuffix("/") { return "\(text) must end with '/' (site/home1/, not site/home1)" }
        return nil
    }
}
