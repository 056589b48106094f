/// The Mosquitto ACL file of the secure profile: shared `%u` patterns that give every user its
/// own request and reply topics, plus one section per account with rights beyond those.
public struct AccessControlList: Sendable, Equatable {
    /// What an account is for, which decides its extra rights.
    public enum Role: String, Sendable, CaseIterable {
        /// An app or client: only the `%u` patterns.
        case client
        /// A button: may also press `p2o/buttons/<name>/press`.
        case button
        /// A device: may also publish its own `devices/<name>/status`, `/telemetry` and `/log`, and
        /// read its `devices/<name>/info` and `/command` (which Trellis alone writes).
        case device
        /// A sensor node: may also publish the readings of its own sensors, `rpi/sensors/<address>`
        /// for each address it was given, and nothing else.
        case sensor
        /// An operator: may also use the shared JSON request topics.
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

    /// The `pattern` lines every user has, on its own topics only (`%u`), and the common reads.
    static func patterns(_ topics: Topics) -> [String] {
        ["# Every user: its own request and reply topics, Trellis's availability and the buttons' public state."]
            + (personalRights(of: "%u", topics: topics) + commonRights(topics: topics)).map { "pattern \($0.access.rawValue) \($0.topic)" }
    }

    /// The file's text.
    public func render(topics: Topics = Topics()) -> String {
        var lines = [
            "# Mosquitto ACL of the Trellis secure profile. `trellis users` rewrites this whole file from the",
            "# account lines below: manage accounts with it rather than by hand. %u is the connecting user.",
            "",
        ] + Self.patterns(topics)
        for (name, role) in accounts {
            lines.append("")
            lines.append("# account: \(name) (\(roleText(of: name, role: role)))")
            lines.append("user \(name)")
            let rights = role.namedRights(of: name, sensors: sensorAddresses[name] ?? [], topics: topics) + role.roleRights(topics: topics)
            lines += rights.map { "topic \($0.access.rawValue) \($0.topic)" }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Reads the accounts back from a file this type wrote.
    public init(parsing text: String) {
        for line in text.split(separator: "\n") where line.hasPrefix("# account: ") {
            let rest = line.dropFirst("# account: ".count)
            guard let open = rest.lastIndex(of: "("), rest.hasSuffix(")") else { continue }
            let words = rest[rest.index(after: open)..<rest.index(before: rest.endIndex)].split(separator: " ").map(String.init)
            guard let first = words.first, let role = Role(rawValue: first) else { continue }
            set(String(rest[..<open].dropLast()), role: role, sensors: Array(words.dropFirst()))
        }
    }
}

extension AccessControlList {
    /// The topic prefixes the ACL's patterns are written with: the relay's `plant.prefix`,
    /// `buttons.prefix` and its own, at their defaults unless given.
    public struct Topics: Sendable, Equatable {
        public var plant: String
        public var buttons: String
        public var trellis: String

        public init(plant: String = "rpi", buttons: String = "p2o", trellis: String = "trellis") {
            self.plant = plant
            self.buttons = buttons
            self.trellis = trellis
        }
    }
}
