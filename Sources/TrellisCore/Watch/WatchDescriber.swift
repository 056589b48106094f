import Foundation
import TrellisMQTTTypes

/// Makes a ``WatchEvent`` of a message and what its handling published: pure, so that what
/// `trellis watch` shows is tested without a broker, and run only while someone watches or a
/// trace asks (the relay keeps the messages themselves, not their descriptions).
public struct WatchDescriber: Sendable {
    /// The most bytes of a payload an event carries.
    public static let payloadLimit = 512

    public var prefixes: TopicPrefixes
    /// Where dead letters are published (their reason is the verdict of a refusal).
    public var deadLetterTopic: String
    public var relay: String

    public init(prefixes: TopicPrefixes, deadLetterTopic: String, relay: String) {
        (self.prefixes, self.deadLetterTopic, self.relay) = (prefixes, deadLetterTopic, relay)
    }

    /// The event of `message`, received at `at`, whose handling published `publishes` (dead-letter
    /// records among them); `seq` is its number.
    public func describe(_ message: MQTTMessage, publishes: [MQTTMessage], at: Date, seq: Int) -> WatchEvent {
        let kind = WatchTopicKind(topic: message.topic, prefixes: prefixes)
        let text = String(decoding: message.payload, as: UTF8.self)
        var event = WatchEvent(
            seq: seq, at: ISO8601Time.format(at), relay: relay, topic: message.topic, service: kind.service,
            client: kind.client, request: nil, summary: "", fields: [:], verdict: .handled, reason: nil, replies: [],
            fanOut: nil, payload: "", size: nil, qos: Int(message.qos.rawValue), retain: message.retain)
        Self.cut(message.payload, into: &event)
        let letters = publishes.filter { $0.topic == deadLetterTopic }
        let answers = publishes.filter { $0.topic != deadLetterTopic }
        switch kind {
        case .plant:
            let fields = WatchPlantText.fields(of: text)
            event.fields = fields
            event.request = fields["ID"]
            event.client = event.client ?? fields["sender"]
            event.summary = WatchPlantText.summary(of: fields) ?? "not a plant-tracker message"
        case let .json(_, action, _):
            event.fields = ["action": action]
            if case let .object(members)? = JSONValue.parse(text), let transaction = members["transaction"] {
                event.request = WatchTopicKind.shortText(Self.plain(transaction))
            }
            event.summary = action.isEmpty ? kind.service : "\(kind.service)/\(action)"
        case let .press(button):
            let presses = answers.filter { $0.topic.hasSuffix("/button-press") }.count
            event.fanOut = presses
            event.summary = Self.pressSummary("press of \(button)", clients: presses)
        default:
            event.summary = kind.summary(payload: text)
        }
        // Home Assistant's discovery configs follow a new thing's state: one line says how many.
        let discovery = prefixes.homeAssistant + "/"
        event.replies = answers.filter { !$0.topic.hasPrefix(discovery) }.map { Reply.of($0, as: kind) }
        let configs = answers.count(where: { $0.topic.hasPrefix(discovery) })
        if configs > 0 {
            event.replies.append(
                Reply(topic: discovery + "…", summary: "\(configs) discovery config\(configs == 1 ? "" : "s")"))
        }
        (event.verdict, event.reason) = Self.verdict(letters: letters, replies: answers, kind: kind)
        return event
    }

    private typealias Reply = WatchEvent.Reply

    /// A press's summary with the clients it reached: `press of door, to 3 clients`. `summary` may
    /// already name a count (a press described again with its full count), which is replaced.
    public static func pressSummary(_ summary: String, clients: Int) -> String {
        let press = summary.components(separatedBy: ", to ").first ?? summary
        return "\(press), to \(clients) client\(clients == 1 ? "" : "s")"
    }

    /// The verdict: an answer's refusal first (its tag is what the sender saw; a dead letter of the
    /// same message repeats it), then a dead letter's reason (spam is muted), then answered or handled.
    static func verdict(letters: [MQTTMessage], replies: [MQTTMessage], kind: WatchTopicKind)
        -> (WatchEvent.Verdict, String?)
    {
        for reply in replies {
            if let refusal = refusal(in: reply, kind: kind) { return (.error, refusal) }
        }
        if let letter = letters.first {
            let reason = deadLetterReason(letter.payload) ?? "unknown"
            if reason == "spam_muted" { return (.muted, reason) }
            return (.deadLettered, reason)
        }
        return (replies.isEmpty || kind.answersNothing ? .handled : .answered, nil)
    }

    /// The refusal an answer carries: an `ERR_` tag, a JSON error code, a failed button answer.
    static func refusal(in reply: MQTTMessage, kind: WatchTopicKind) -> String? {
        let text = String(decoding: reply.payload, as: UTF8.self)
        if case .plant = kind, let operation = WatchPlantText.fields(of: text)["operation"],
            operation.hasPrefix("ERR_")
        {
            return operation
        }
        guard text.hasPrefix("{"), case let .object(members)? = JSONValue.parse(text) else { return nil }
        if case let .string(status)? = members["status"], status == "error" || status == "failed" {
            if case let .string(code)? = members["code"] { return code }
            if case let .string(message)? = members["error"] { return WatchTopicKind.shortText(message) }
            return status
        }
        return nil
    }

    static func deadLetterReason(_ payload: [UInt8]) -> String? {
        guard case let .object(members)? = JSONValue.parse(String(decoding: payload, as: UTF8.self)),
            case let .string(reason)? = members["reason"]
        else { return nil }
        return reason
    }

    /// The payload as text, cut at a character boundary within ``payloadLimit``.
    static func cut(_ payload: [UInt8], into event: inout WatchEvent) {
        guard payload.count > payloadLimit else {
            event.payload = String(decoding: payload, as: UTF8.self)
            return
        }
        var end = payloadLimit
        while end > 0, payload[end] & 0xC0 == 0x80 { end -= 1 }
        event.payload = String(decoding: payload[..<end], as: UTF8.self)
        event.size = payload.count
    }

    /// A JSON value as text: a string as it is, anything else as JSON.
    static func plain(_ value: JSONValue) -> String {
        if case let .string(text) = value { return text }
        return String(decoding: JSONEnvelope.encode(value), as: UTF8.self)
    }
}

extension WatchEvent.Reply {
    /// `message` decoded as an answer to a message of `kind`.
    static func of(_ message: MQTTMessage, as kind: WatchTopicKind) -> WatchEvent.Reply {
        let text = String(decoding: message.payload, as: UTF8.self)
        if case .plant = kind, let summary = WatchPlantText.summary(of: WatchPlantText.fields(of: text)) {
            return WatchEvent.Reply(topic: message.topic, summary: summary)
        }
        if text.hasPrefix("{"), case let .object(members)? = JSONValue.parse(text),
            case let .string(status)? = members["status"]
        {
            let code: String? = if case let .string(code)? = members["code"] { code } else { nil }
            return WatchEvent.Reply(topic: message.topic, summary: code.map { "\(status): \($0)" } ?? status)
        }
        return WatchEvent.Reply(topic: message.topic, summary: WatchTopicKind.shortText(text))
    }
}
