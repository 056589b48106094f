/// A topic of ``TopicAccessTable`` with one `{name}` level (a device's id, a button's name, a
/// plant's id), declared once: the relay spells its topics, subscribes to its filter and reads the
/// name back from a topic through it, and the table's row names it, so a topic's spelling lives
/// in one place. `{plant}`, `{buttons}` and `{trellis}` stand for the configured prefixes.
public struct TopicPattern: Sendable, Hashable, CustomStringConvertible {
    /// The topic as the table writes it, such as `devices/{name}/info`.
    public let template: String

    public init(_ template: String) {
        self.template = template
    }

    public var description: String { template }

    /// The pattern spelled with `prefixes`, to read many topics through (``ResolvedTopicPattern``).
    public func resolved(_ prefixes: TopicPrefixes) -> ResolvedTopicPattern {
        ResolvedTopicPattern(self, prefixes)
    }

    /// The subscription filter: `{name}` as `+`.
    public func filter(_ prefixes: TopicPrefixes) -> String {
        resolved(prefixes).filter
    }

    /// The topic of `name`.
    public func topic(_ name: String, _ prefixes: TopicPrefixes) -> String {
        resolved(prefixes).topic(name)
    }

    /// The name `topic` carries in the `{name}` level; nil when `topic` is not of this pattern or
    /// the level is empty. A caller reading many topics resolves the pattern once instead.
    public func name(in topic: String, _ prefixes: TopicPrefixes) -> String? {
        resolved(prefixes).name(in: topic)
    }
}

extension TopicPattern {
    /// What a device publishes: its status (`online`/`offline`), telemetry and log lines.
    public static let deviceStatus = TopicPattern("devices/{name}/status")
    public static let deviceTelemetry = TopicPattern("devices/{name}/telemetry")
    public static let deviceLog = TopicPattern("devices/{name}/log")
    /// A device's retained record, which Trellis alone writes.
    public static let deviceInfo = TopicPattern("devices/{name}/info")
    /// Commands to a device, which Trellis alone sends.
    public static let deviceCommand = TopicPattern("devices/{name}/command")
    /// A model's retained record (under `{trellis}/#` in the table).
    public static let modelInfo = TopicPattern("{trellis}/models/{name}/info")
    /// A plant's retained state (under `{trellis}/#` in the table).
    public static let plantState = TopicPattern("{trellis}/plants/{name}/state")
    /// A button's retained count and history.
    public static let buttonState = TopicPattern("{buttons}/buttons/{name}/state")

    /// Every pattern, for the test that checks each lies within a row of the table.
    public static let all: [TopicPattern] = [
        .deviceStatus, .deviceTelemetry, .deviceLog, .deviceInfo, .deviceCommand, .modelInfo, .plantState, .buttonState
    ]
}

/// A ``TopicPattern`` spelled with given prefixes: what comes before its `{name}` level and what
/// comes after it, found once.
///
/// A relay's prefixes stay the same for as long as a sweep plan or a service lives, while the
/// topics read through a pattern are many: the start-up sweep judges every retained topic Trellis
/// owns (with 10,000 buttons, tens of thousands), and Home Assistant discovery every retained
/// publish. So each holds its patterns resolved, and reading a name from a topic is a prefix and
/// a suffix test rather than an expansion of the template.
public struct ResolvedTopicPattern: Sendable, Hashable {
    /// The topic up to the `{name}` level, such as `devices/`; the whole topic for a template
    /// without `{name}`.
    public let head: String
    /// The topic after the `{name}` level, such as `/info`; nil for a template without `{name}`.
    public let tail: String?
    /// The lengths, in characters, that a topic's name is cut from: counted once, not per topic.
    private let headCount: Int
    private let tailCount: Int

    /// `pattern` with `prefixes` in place of `{plant}`, `{buttons}` and `{trellis}`, split at its
    /// (one) `{name}` level.
    public init(_ pattern: TopicPattern, _ prefixes: TopicPrefixes) {
        let expanded = prefixes.expand(pattern.template)
        if let marker = expanded.range(of: "{name}") {
            head = String(expanded[..<marker.lowerBound])
            tail = String(expanded[marker.upperBound...])
        } else {
            head = expanded
            tail = nil
        }
        headCount = head.count
        tailCount = tail?.count ?? 0
    }

    /// The subscription filter: `{name}` as `+`.
    public var filter: String { topic("+") }

    /// The topic of `name`.
    public func topic(_ name: String) -> String {
        guard let tail else { return head }
        return head + name + tail
    }

    /// The name `topic` carries in the `{name}` level; nil when `topic` is not of this pattern or
    /// the level is empty.
    public func name(in topic: String) -> String? {
        guard let tail, topic.hasPrefix(head), topic.hasSuffix(tail), topic.count > headCount + tailCount else {
            return nil
        }
        let name = topic.dropFirst(headCount).dropLast(tailCount)
        return name.contains("/") ? nil : String(name)
    }
}
