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

    /// The subscription filter: `{name}` as `+`.
    public func filter(_ prefixes: TopicPrefixes) -> String {
        prefixes.expand(template).replacingOccurrences(of: "{name}", with: "+")
    }

    /// The topic of `name`.
    public func topic(_ name: String, _ prefixes: TopicPrefixes) -> String {
        prefixes.expand(template).replacingOccurrences(of: "{name}", with: name)
    }

    /// The name `topic` carries in the `{name}` level; nil when `topic` is not of this pattern or
    /// the level is empty.
    public func name(in topic: String, _ prefixes: TopicPrefixes) -> String? {
        let expanded = prefixes.expand(template)
        guard let marker = expanded.range(of: "{name}") else { return nil }
        let head = expanded[..<marker.lowerBound]
        let tail = expanded[marker.upperBound...]
        guard topic.count > head.count + tail.count, topic.hasPrefix(head), topic.hasSuffix(tail) else { return nil }
        let name = topic.dropFirst(head.count).dropLast(tail.count)
        return name.contains("/") ? nil : String(name)
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
