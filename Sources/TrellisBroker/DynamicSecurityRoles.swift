import TrellisCore

/// How the deployment's roles live in Mosquitto's dynamic security plugin.
///
/// The plugin of Mosquitto 2.0 takes `%u` in an ACL topic literally, so the ACL file's patterns
/// cannot be shared: every account gets a role of its own, `user/NAME` (a name no account can take,
/// as names have no `/`), with its personal topics and those that name it (a button's press, a
/// device's topics, a sensor node's readings). Besides, it has the shared role of its kind, `app`
/// (a client), `button`, `device`, `sensor`, `operator` or `trellis`, with what every account of
/// that kind may do. Clients without an account, where the broker lets them in, are in the
/// anonymous group, whose role `anonymous` has the released app's shared topics. The rights are
/// ``TopicAccessTable``'s, as in the ACL file, so both backends grant the same.
public enum DynamicSecurityRoles {
    /// The account the plugin's administration is done with, unless another is named.
    public static let defaultAdmin = "trellis-admin"
    /// The role of the administration account: the plugin's control topics only.
    public static let adminRole = "admin"
    /// The group (and its one role) of clients without an account.
    public static let anonymousGroup = "anonymous"

    /// The shared role of a kind of account.
    public static func sharedRole(of role: AccessControlList.Role) -> String {
        role == .client ? "app" : role.rawValue
    }

    /// The kind of account whose shared role is `name`; nil for another role.
    public static func role(ofShared name: String) -> AccessControlList.Role? {
        AccessControlList.Role.allCases.first { sharedRole(of: $0) == name }
    }

    /// The account's own role.
    public static func personalRole(of name: String) -> String {
        "user/\(name)"
    }

    /// The roles of an account, shared one first; Trellis's account needs no role of its own.
    public static func roles(of name: String, role: AccessControlList.Role) -> [String] {
        role == .trellis ? [sharedRole(of: role)] : [sharedRole(of: role), personalRole(of: name)]
    }

    /// The ACLs of a kind's shared role.
    public static func sharedACLs(of role: AccessControlList.Role, topics: AccessControlList.Topics = .init())
        -> [DynamicSecurityACL]
    {
        acls(for: AccessControlList.sharedRights(of: role, topics: topics))
    }

    /// The ACLs of an account's own role.
    public static func personalACLs(
        of name: String, role: AccessControlList.Role, sensors: [String],
        topics: AccessControlList.Topics = .init()
    ) -> [DynamicSecurityACL] {
        acls(for: AccessControlList.personalRights(of: name, role: role, sensors: sensors, topics: topics))
    }

    /// The ACLs of the anonymous group's role.
    public static func anonymousACLs(topics: AccessControlList.Topics = .init()) -> [DynamicSecurityACL] {
        acls(for: AccessControlList.anonymousRights(topics: topics))
    }

    /// The ACLs of the administration role: sending commands to the plugin and reading its answers.
    public static let adminACLs: [DynamicSecurityACL] = [
        DynamicSecurityACL("publishClientSend", "$CONTROL/dynamic-security/#"),
        DynamicSecurityACL("publishClientReceive", "$CONTROL/dynamic-security/#"),
        DynamicSecurityACL("subscribePattern", "$CONTROL/dynamic-security/#")
    ]

    /// A read right is a subscription and the delivery of what matches it (the profile denies both
    /// by default; unsubscribing is always allowed); a write right is a publish.
    public static func acls(for rights: [TopicRight]) -> [DynamicSecurityACL] {
        rights.flatMap { right -> [DynamicSecurityACL] in
            let read = [
                DynamicSecurityACL("subscribePattern", right.topic),
                DynamicSecurityACL("publishClientReceive", right.topic)
            ]
            let write = [DynamicSecurityACL("publishClientSend", right.topic)]
            switch right.access {
            case .read: return read
            case .write: return write
            case .readwrite: return write + read
            }
        }
    }

    /// The sensor addresses a sensor account's own role grants, read back from its ACLs.
    public static func sensors(in acls: [DynamicSecurityACL], topics: AccessControlList.Topics = .init()) -> [String] {
        let prefix = "\(topics.plant)/sensors/"
        return acls.filter { $0.acltype == "publishClientSend" && $0.topic.hasPrefix(prefix) && $0.allow }
            .map { String($0.topic.dropFirst(prefix.count)) }
    }
}

/// One account as the plugin holds it, for `trellis users list`.
public struct DynamicSecurityAccount: Sendable, Equatable {
    public var name: String
    /// The kind, from the account's shared role; nil for a client the profile did not make.
    public var role: AccessControlList.Role?
    public var sensors: [String]
    /// Every role the client has, as the plugin names them.
    public var roles: [String]

    /// The role as `trellis users list` prints it: `sensor 0x36 0x37`, or the plugin's role names.
    public var roleText: String {
        guard let role else { return "roles: " + (roles.isEmpty ? "none" : roles.joined(separator: ", ")) }
        return ([role.rawValue] + sensors).joined(separator: " ")
    }

    /// The accounts of a `listClients` and a `listRoles` answer, the administration account left out.
    public static func accounts(
        clients: [DynamicSecurityResponse.Client], roles: [DynamicSecurityResponse.Role],
        admin: String
    ) -> [DynamicSecurityAccount] {
        let aclsByRole = Dictionary(roles.map { ($0.rolename, $0.acls ?? []) }, uniquingKeysWith: { first, _ in first })
        return clients.filter { $0.username != admin }.map { client in
            let names = (client.roles ?? []).map(\.rolename)
            let role = names.lazy.compactMap(DynamicSecurityRoles.role(ofShared:)).first
            let own = aclsByRole[DynamicSecurityRoles.personalRole(of: client.username)] ?? []
            return DynamicSecurityAccount(
                name: client.username, role: role,
                sensors: role == .sensor ? DynamicSecurityRoles.sensors(in: own) : [], roles: names)
        }
    }
}
