/// What a topic is, for ``WatchDescriber``: which protocol or service it belongs to and whom it
/// names, read from the topic alone with the relay's prefixes.
enum WatchTopicKind: Equatable {
    /// A plant-tracker request, on the shared topic or an app's own (`client`).
    case plant(client: String?)
    /// A sensor's reading, `address` its topic's last level.
    case sensor(address: String)
    /// A button's press.
    case press(button: String)
    /// An app's status, registration or unregistration for the button service.
    case buttonClient(client: String, what: String)
    /// A JSON service's request: the service, its action ("" for a service without one) and the
    /// client of the per-client form.
    case json(service: String, action: String, client: String?)
    /// A device's status, telemetry or log line.
    case device(id: String, what: String)
    case other

    init(topic: String, prefixes: TopicPrefixes) {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let plant = prefixes.plant.split(separator: "/").count
        let buttons = prefixes.buttons.split(separator: "/").count
        let trellis = prefixes.trellis.split(separator: "/").count
        func under(_ prefix: String, _ count: Int) -> [String]? {
            guard topic.hasPrefix(prefix + "/") else { return nil }
            return Array(levels.dropFirst(count))
        }
        if let rest = under(prefixes.plant, plant) {
            switch rest.count {
            case 1 where rest[0] == "torpi": self = .plant(client: nil)
            case 2 where rest[0] == "torpi": self = .plant(client: rest[1])
            case 2 where rest[0] == "sensors": self = .sensor(address: rest[1])
            default: self = .other
            }
        } else if let rest = under(prefixes.buttons, buttons) {
            if rest.count == 3, rest[0] == "buttons", rest[2] == "press" {
                self = .press(button: rest[1])
            } else if rest.count == 3, rest[0] == "clients" {
                self = .buttonClient(client: rest[1], what: rest[2])
            } else {
                self = .other
            }
        } else if let rest = under(prefixes.trellis, trellis) {
            if rest.count >= 2, rest[0] == "request" {
                self = .json(service: rest[1], action: rest.dropFirst(2).joined(separator: "/"), client: nil)
            } else if rest.count >= 4, rest[0] == "clients", rest[2] == "request" {
                self = .json(service: rest[3], action: rest.dropFirst(4).joined(separator: "/"), client: rest[1])
            } else {
                self = .other
            }
        } else if levels.count == 3, levels[0] == "devices" {
            self = .device(id: levels[1], what: levels[2])
        } else {
            self = .other
        }
    }

    var service: String {
        switch self {
        case .plant: "plant"
        case .sensor: "sensor"
        case .press, .buttonClient: "buttons"
        case let .json(service, _, _): service
        case .device: "devices"
        case .other: "unknown"
        }
    }

    var client: String? {
        switch self {
        case let .plant(client): client
        case let .sensor(address): address
        case .press: nil
        case let .buttonClient(client, _): client
        case let .json(_, _, client): client
        case let .device(id, _): id
        case .other: nil
        }
    }

    /// Whether what this kind publishes is a state rather than an answer (a reading's plant state,
    /// a device's record): a message of it is handled, not answered.
    var answersNothing: Bool {
        switch self {
        case .sensor, .press, .device: true
        case let .buttonClient(_, what): what == "status"
        default: false
        }
    }

    /// A one-line summary of a message of this kind with `payload`.
    func summary(payload: String) -> String {
        switch self {
        case let .sensor(address): "reading of \(address): \(Self.shortText(payload))"
        case let .buttonClient(client, what): "\(what) of \(client): \(Self.shortText(payload))"
        case let .device(id, what): "\(what) of \(id): \(Self.shortText(payload))"
        default: Self.shortText(payload)
        }
    }

    /// `text` on one line (line breaks and other controls shown as spaces), at most 120 characters.
    static func shortText(_ text: String) -> String {
        // Cut first: a reply of kilobytes is summarized from its first 120 characters, not all of them.
        let head = text.prefix(120)
        let flat = WatchLine.replacingControls(in: head, with: " ")
        return head.endIndex < text.endIndex ? String(flat.prefix(119)) + "…" : flat
    }
}

/// The plant tracker's text as `trellis watch` shows it: the five fields, the payload decoded.
enum WatchPlantText {
    /// The five keys of the protocol.
    static let keys: Set<Substring> = ["ID", "sender", "receiver", "payload", "operation"]
    /// The most characters of a field an event keeps.
    static let fieldLimit = 256

    /// The protocol's `key:value` pieces of `text`, split at `;` and each piece's first `:`, the
    /// payload percent-decoded, each value cut to ``fieldLimit`` characters. Forgiving: a message the
    /// relay refused is shown as far as it goes; other keys are left out.
    static func fields(of text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for piece in text.split(separator: ";", omittingEmptySubsequences: true) {
            guard let colon = piece.firstIndex(of: ":"), keys.contains(piece[..<colon]) else { continue }
            let key = String(piece[..<colon])
            let value = piece[piece.index(after: colon)...].prefix(fieldLimit * 3)
            let decoded = key == "payload" ? PlantPercentEncoding.decode(String(value)) : String(value)
            fields[key] = decoded.count > fieldLimit ? String(decoded.prefix(fieldLimit - 1)) + "…" : decoded
        }
        return fields
    }

    /// `REQ_numPlants #3 from Bob: payload`, nil without an operation.
    static func summary(of fields: [String: String]) -> String? {
        guard let operation = fields["operation"] else { return nil }
        var summary = operation
        if let id = fields["ID"] { summary += " #\(id)" }
        if let sender = fields["sender"] { summary += " from \(sender)" }
        if let payload = fields["payload"], !payload.isEmpty { summary += ": " + WatchTopicKind.shortText(payload) }
        return summary
    }
}
