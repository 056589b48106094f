import TrellisCore

/// The Mosquitto ACL file of the deployment: the rights of clients without an account first (the
/// file's lines before any `user` line, which Mosquitto applies to anonymous clients), then one
/// section per account with exactly its role's rights, all taken from ``TopicAccessTable``.
public struct AccessControlList: Sendable, Equatable {
    /// The topic prefixes the rights are written with.
    public typealias Topics = TopicPrefixes

    /// What an account is for, which decides its rights (``accessRole``'s row of the table).
    public enum Role: String, Sendable, CaseIterable {
        /// An app or client: its own request and reply topics.
        case client
        /// A button: its own presses, `p2o/buttons/<name>/press`.
        case button
        /// A device: its own `devices/<name>/status`, `/telemetry` and `/log`, and reads its
        /// `devices/<name>/info` and `/command` (which Trellis alone writes).
        case device
        /// A sensor node: the readings of its own sensors, `rpi/sensors/<address>` for each
        /// address it was given, and nothing else.
        case sensor
        /// Home Assistant: the discovery configs and the states they name, its birth message, and a
        /// device's restart request.
        case homeassistant
        /// An operator: every request and event, every topic to read.
        case `operator`
        /// Trellis itself: reads every request and event, writes every reply.
        case trellis
    }

    /// Accounts and their roles, in the order they were added.
    public private(set) var accounts: [(name: String, role: Role)] = []
    /// The sensor addresses of each sensor account (canonical spelling, `0x36`).
    public private(set) var sensorAddresses: [String: [String]] = [:]

    public init() {}

    public static func == (lhs: AccessControlList, rhs: AccessControlList) -> Bool {
        lhs.accounts.map(\.name) == rhs.accounts.map(\.name) && lhs.accounts.map(\.role) == rhs.accounts.map(\.role)
            && lhs.sensorAddresses == rhs.sensorAddresses
    }

    /// Adds or replaces an account; `sensors` are the addresses of a sensor account.
    public mutating func set(_ name: String, role: Role, sensors: [String] = []) {
        accounts.removeAll { $0.name == name }
        accounts.append((name, role))
        sensorAddresses[name] = role == .sensor ? sensors : nil
    }

    /// Removes an account; false when there was none.
    @discardableResult
    public mutating func remove(_ name: String) -> Bool {
        let before = accounts.count
        accounts.removeAll { $0.name == name }
        sensorAddresses[name] = nil
        return accounts.count != before
    }

    /// The role and, for a sensor account, its addresses, as the account line writes them:
    /// `sensor 0x36 0x37`.
    public func roleText(of name: String, role: Role) -> String {
        ([role.rawValue] + (sensorAddresses[name] ?? [])).joined(separator: " ")
    }

    /// The file's text.
    public func render(topics: Topics = Topics()) -> String {
        var lines =
            [
                "# Mosquitto ACL of Trellis's accounts. `trellis users` rewrites this whole file from the account",
                "# lines below: manage accounts with it rather than by hand. Every right comes from Trellis's topic",
                "# table (docs/security.md).",
                "",
                "# Clients without an account, where the broker lets them in: the released app's shared topics."
            ] + Self.anonymousRights(topics: topics).map { "topic \($0.access.rawValue) \($0.topic)" }
        for (name, role) in accounts {
            lines.append("")
            lines.append("# account: \(name) (\(roleText(of: name, role: role)))")
            lines.append("user \(name)")
            lines += Self.rights(of: name, role: role, sensors: sensorAddresses[name] ?? [], topics: topics)
                .map { "topic \($0.access.rawValue) \($0.topic)" }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Reads the accounts back from a file this type wrote.
    public init(parsing text: String) {
        for line in text.split(separator: "\n") where line.hasPrefix("# account: ") {
            let rest = line.dropFirst("# account: ".count)
            guard let open = rest.lastIndex(of: "("), rest.hasSuffix(")") else { continue }
            let words = rest[rest.index(after: open)..<rest.index(before: rest.endIndex)].split(separator: " ").map(
                String.init)
            guard let first = words.first, let role = Role(rawValue: first) else { continue }
            set(String(rest[..<open].dropLast()), role: role, sensors: Array(words.dropFirst()))
        }
    }
}
