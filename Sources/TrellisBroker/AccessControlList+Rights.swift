import TrellisCore

extension AccessControlList.Role {
    /// The role of ``TopicAccessTable`` an account of this kind has.
    public var accessRole: AccessRole {
        switch self {
        case .client: .app
        case .button: .button
        case .device: .device
        case .sensor: .sensor
        case .homeassistant: .homeAssistant
        case .operator: .operator
        case .trellis: .trellis
        }
    }
}

extension AccessControlList {
    /// Every right of the account `name` of `role` (`sensors`: a sensor node's addresses), as
    /// ``TopicAccessTable`` gives it: both account backends grant exactly these.
    public static func rights(of name: String, role: Role, sensors: [String] = [], topics: Topics = Topics())
        -> [TopicRight]
    {
        TopicAccessTable.rights(of: role.accessRole, name: name, sensors: sensors, prefixes: topics)
    }

    /// What a client without an account may do, where the broker lets one in.
    public static func anonymousRights(topics: Topics = Topics()) -> [TopicRight] {
        TopicAccessTable.rights(of: .anonymous, name: nil, prefixes: topics)
    }

    /// The rights every account of `role` has whatever its name (the dynamic security plugin's
    /// shared role of the kind): the table's grants on every name and on topics naming no one.
    public static func sharedRights(of role: Role, topics: Topics = Topics()) -> [TopicRight] {
        TopicAccessTable.rights(of: role.accessRole, name: nil, prefixes: topics)
    }

    /// The rights of the account `name` beyond its kind's shared ones: those naming it.
    public static func personalRights(of name: String, role: Role, sensors: [String] = [], topics: Topics = Topics())
        -> [TopicRight]
    {
        let shared = Set(sharedRights(of: role, topics: topics))
        return rights(of: name, role: role, sensors: sensors, topics: topics).filter { !shared.contains($0) }
    }
}
