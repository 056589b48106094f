/// An MQTT topic filter (`a/+/c`, `a/#`) that can tell whether a topic matches and which
/// levels the wildcards stood for.
public struct TopicFilter: Sendable, Hashable, CustomStringConvertible {
    /// The filter as subscribed.
    public let text: String
    private let levels: [Substring]

    public init(_ text: String) {
        self.text = text
        self.levels = text.split(separator: "/", omittingEmptySubsequences: false)
    }

    /// The levels matched by `+` (and, for a trailing `#`, the rest joined with `/`), or nil
    /// when `topic` does not match. Topics starting with `$` never match a leading wildcard.
    public func match(_ topic: String) -> [String]? {
        match(levels: topic.split(separator: "/", omittingEmptySubsequences: false))
    }

    /// ``match(_:)`` for a topic already split into its levels, so a table of filters splits
    /// each topic once.
    public func match(levels topicLevels: [Substring]) -> [String]? {
        var captures: [String] = []
        var topicLevels = topicLevels[...]
        if topicLevels.first?.hasPrefix("$") == true, let first = levels.first, first == "+" || first == "#" {
            return nil
        }
        for level in levels {
            if level == "#" {
                captures.append(topicLevels.joined(separator: "/"))
                return captures
            }
            guard let next = topicLevels.popFirst() else { return nil }
            if level == "+" {
                captures.append(String(next))
            } else if !level.utf8.elementsEqual(next.utf8) {
                // Bytes, as the broker compares them: `==` on strings takes canonically equivalent
                // spellings (`é` and `e` + U+0301) as one, which would let one account's name match another's.
                return nil
            }
        }
        return topicLevels.isEmpty ? captures : nil
    }

    /// Whether the filter has a `+` or `#` level, so that it matches more than the one topic it spells.
    public var hasWildcard: Bool { levels.contains { $0 == "+" || $0 == "#" } }

    /// The first level when it is not a wildcard: only topics starting with it can match.
    public var literalFirstLevel: String? {
        guard let first = levels.first, first != "+", first != "#" else { return nil }
        return String(first)
    }

    /// Whether some topic matches both this filter and `other`: level by level each pair is equal
    /// or has a `+`, until a `#` on either side takes the rest (`a/#` also matches `a`).
    public func overlaps(_ other: TopicFilter) -> Bool {
        let (mine, theirs) = (levels, other.levels)
        var index = 0
        while index < mine.count && index < theirs.count {
            let (one, two) = (mine[index], theirs[index])
            if one == "#" || two == "#" { return true }
            if one != "+" && two != "+" && !one.utf8.elementsEqual(two.utf8) { return false }
            index += 1
        }
        if mine.count == theirs.count { return true }
        let longer = mine.count > theirs.count ? mine : theirs
        return longer.count == index + 1 && longer[index] == "#"
    }

    public var description: String { text }
}
