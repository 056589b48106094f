import Foundation

/// What is derived from the table: a role's broker rights, a request's reply space, the docs' table.
extension TopicAccessTable {
    /// Every right of an account of `role` named `name` (nil for the anonymous role), in table
    /// order: its own-name grants with `{name}` as its name (a sensor node's: as each address of
    /// `sensors`), its every-name grants with `+`. A filter it may publish and read is `readwrite`.
    public static func rights(
        of role: AccessRole, name: String?, sensors: [String] = [],
        prefixes: TopicPrefixes = TopicPrefixes()
    ) -> [TopicRight] {
        var order: [String] = []
        var access: [String: (write: Bool, read: Bool)] = [:]
        func grant(_ filters: [String], write: Bool) {
            for filter in filters {
                if access[filter] == nil { order.append(filter) }
                var entry = access[filter] ?? (false, false)
                if write { entry.write = true } else { entry.read = true }
                access[filter] = entry
            }
        }
        for row in rows {
            let topic = prefixes.expand(row.topic)
            for (grants, write) in [(row.publish, true), (row.read, false)] {
                for granted in grants where granted.role == role {
                    grant(filters(topic, scope: granted.scope, role: role, name: name, sensors: sensors), write: write)
                }
            }
        }
        // An account that may read and write every topic needs no other line.
        if let all = access["#"], all.write && all.read { return [TopicRight(.readwrite, "#")] }
        return order.map { filter in
            let entry = access[filter]!
            return TopicRight(entry.write && entry.read ? .readwrite : entry.write ? .write : .read, filter)
        }
    }

    /// The filters a grant on `topic` stands for.
    private static func filters(_ topic: String, scope: Grant.Scope, role: AccessRole, name: String?, sensors: [String])
        -> [String]
    {
        guard topic.contains("{name}") else { return [topic] }
        switch scope {
        case .any:
            return [topic.replacingOccurrences(of: "{name}", with: "+")]
        case .own where role == .sensor:
            return sensors.map { topic.replacingOccurrences(of: "{name}", with: $0) }
        case .own:
            guard let name else { return [] }
            return [topic.replacingOccurrences(of: "{name}", with: name)]
        }
    }

    /// Where the replies to a request on `topic` may go: the filters of the request row `topic`
    /// belongs to, `{name}` being the name the topic gives its sender; nil when `topic` is no
    /// request topic of the table. A v5 Response Topic outside them is refused.
    public static func replySpace(ofRequest topic: String, prefixes: TopicPrefixes = TopicPrefixes()) -> [TopicFilter]?
    {
        for row in rows where !row.replies.isEmpty {
            let template = prefixes.expand(row.topic)
            let filter = TopicFilter(template.replacingOccurrences(of: "{name}", with: "+"))
            guard let captures = filter.match(topic) else { continue }
            // The sender's name is the capture of the `{name}` level (the first `+` of the row).
            let name = template.contains("{name}") ? captures.first : nil
            return row.replies.map { reply in
                let expanded = prefixes.expand(reply)
                return TopicFilter(name.map { expanded.replacingOccurrences(of: "{name}", with: $0) } ?? expanded)
            }
        }
        return nil
    }

    /// Whether a reply to a request on `requestTopic` may be sent to `responseTopic`.
    public static func allowsResponseTopic(
        _ responseTopic: String, forRequest requestTopic: String,
        prefixes: TopicPrefixes = TopicPrefixes()
    ) -> Bool {
        guard !responseTopic.isEmpty, !responseTopic.contains("+"), !responseTopic.contains("#"),
            let space = replySpace(ofRequest: requestTopic, prefixes: prefixes)
        else { return false }
        return space.contains { $0.match(responseTopic) != nil }
    }

    /// The table as docs/security.md shows it: one line per row, the roles of each cell.
    public static func markdown(prefixes: TopicPrefixes = TopicPrefixes()) -> String {
        func cell(_ grants: [Grant]) -> String {
            grants.map { $0.role.title + ($0.scope == .own && $0.role != .trellis ? " (own)" : "") }.joined(
                separator: ", ")
        }
        let lines = rows.map { row in
            "| `\(prefixes.expand(row.topic))` | \(cell(row.publish)) | \(cell(row.read)) | \(row.about) |"
        }
        return (["| topic | who publishes | who reads | what it carries |", "|---|---|---|---|"] + lines).joined(
            separator: "\n")
    }
}

extension TopicAccessTable {
    /// The filters of the rows only Trellis publishes (its replies, states, records and commands),
    /// `{name}` as `+`; the last row, on which Trellis may publish anything, is not among them.
    public static func trellisOutputs(prefixes: TopicPrefixes = TopicPrefixes()) -> [String] {
        rows.filter { $0.topic != "#" && $0.publish.allSatisfy { $0.role == .trellis } }.map { $0.filter(prefixes) }
    }

    /// The filters of the rows someone other than Trellis publishes: requests, readings, presses,
    /// registrations, device messages, even where they sit under a filter of ``trellisOutputs(prefixes:)``.
    public static func inputs(prefixes: TopicPrefixes = TopicPrefixes()) -> [String] {
        rows.filter { $0.publish.contains { $0.role != .trellis } }.map { $0.filter(prefixes) }
    }
}

extension TopicAccessTable.Row {
    /// The row's subscription filter with `prefixes`: `{name}` as `+`.
    public func filter(_ prefixes: TopicPrefixes) -> String {
        prefixes.expand(topic).replacingOccurrences(of: "{name}", with: "+")
    }
}
