/// Which events `trellis watch` shows: each term a condition, all of them met. A term is
/// `client:NAME`, `topic:FILTER` (an MQTT filter, `+` and `#` allowed), `service:NAME`,
/// `verdict:VERDICT` (``WatchEvent/Verdict``, or `refused` for every verdict but answered and
/// handled) or a bare MQTT filter, read as `topic:`. Terms of one kind are alternatives: `service:plant
/// service:buttons` shows both.
public struct WatchFilter: Sendable, Equatable {
    public enum Term: Sendable, Equatable {
        case client(String)
        case topic(String)
        case service(String)
        case verdict(String)
    }

    public var terms: [Term]

    /// The words a verdict term takes.
    public static let verdicts = WatchEvent.Verdict.allCases.map(\.rawValue) + ["refused"]

    /// Reads `words`; a word of an unknown kind or an unknown verdict is an error naming it.
    public init(parsing words: [String]) throws(WatchFilterError) {
        terms = try words.map { word throws(WatchFilterError) in
            guard let colon = word.firstIndex(of: ":"), !word.hasPrefix("$") else {
                return try Self.topicTerm(word, from: word)
            }
            let kind = word[..<colon]
            let value = String(word[word.index(after: colon)...])
            guard !value.isEmpty else { throw WatchFilterError("\(word): the term has no value after the colon") }
            switch kind {
            case "client": return .client(value)
            case "service": return .service(value)
            case "topic": return try Self.topicTerm(value, from: word)
            case "verdict":
                guard Self.verdicts.contains(value) else {
                    throw WatchFilterError(
                        "\(word): a verdict is one of \(Self.verdicts.joined(separator: ", "))")
                }
                return .verdict(value)
            default:
                // A topic level may hold a colon: a word whose kind is not a known one is a topic filter.
                return try Self.topicTerm(word, from: word)
            }
        }
    }

    private static func topicTerm(_ filter: String, from word: String) throws(WatchFilterError) -> Term {
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level.contains("#"), level != "#" || index != levels.count - 1 {
                throw WatchFilterError("\(word): # may only be a whole last level of a topic filter")
            }
            if level.contains("+"), level != "+" {
                throw WatchFilterError("\(word): + may only be a whole level of a topic filter")
            }
        }
        return .topic(filter)
    }

    /// Whether `event` meets every kind of term given (any one term of each kind).
    public func admits(_ event: WatchEvent) -> Bool {
        var kinds: [String: Bool] = [:]
        for term in terms {
            let (kind, met): (String, Bool) =
                switch term {
                case let .client(name): ("client", event.client == name)
                case let .service(name): ("service", event.service == name)
                case let .topic(filter): ("topic", TopicFilter(filter).match(event.topic) != nil)
                case let .verdict(word):
                    (
                        "verdict",
                        word == "refused"
                            ? ![.answered, .handled].contains(event.verdict) : event.verdict.rawValue == word
                    )
                }
            kinds[kind] = (kinds[kind] ?? false) || met
        }
        return kinds.values.allSatisfy { $0 }
    }
}

/// A filter term that cannot be read, said in a sentence that names it.
public struct WatchFilterError: Error, Equatable, CustomStringConvertible {
    public var description: String

    init(_ description: String) { self.description = description }
}
