import TrellisCore

/// What `trellis users sync` changes in the dynamic security plugin to bring every role it keeps in
/// line with ``TopicAccessTable``: the shared role of each kind of account, each account's own
/// role (`user/NAME`, a sensor node keeping its addresses) and list of roles, and the anonymous
/// group with its role. The plugin keeps the rights an account was given; accounts made by an
/// older Trellis, whose rows were broader, keep them until this runs.
///
/// A role's ACLs are changed one by one (`removeRoleACL`, `addRoleACL`) rather than the role
/// deleted and made again: the plugin of Mosquitto 2.0 leaves a deleted role in the lists of the
/// clients holding it, and an account keeps its rights the whole time. Worked out from one
/// reading of the plugin's clients, roles and groups, so running it again on what it made
/// changes nothing.
public struct DynamicSecuritySync: Sendable {
    /// The commands to send, in order: roles first, then the anonymous group, then the accounts.
    public private(set) var commands: [DynamicSecurityCommand] = []
    /// One line per role, group or account changed, as `trellis users sync` prints it.
    public private(set) var changes: [String] = []
    /// The clients of no kind of the profile (made by hand), left as they are.
    public private(set) var leftAlone: [String] = []
    /// What needs a hand: a sensor node whose addresses cannot be read back from its own role.
    public private(set) var warnings: [String] = []

    public init(
        clients: [DynamicSecurityResponse.Client], roles: [DynamicSecurityResponse.Role],
        groups: [DynamicSecurityResponse.Group], anonymousGroup: String?, admin: String,
        topics: AccessControlList.Topics = .init()
    ) {
        let held = Dictionary(roles.map { ($0.rolename, $0.acls ?? []) }, uniquingKeysWith: { first, _ in first })
        for kind in AccessControlList.Role.allCases {
            bring(
                DynamicSecurityRoles.sharedRole(of: kind),
                to: DynamicSecurityRoles.sharedACLs(of: kind, topics: topics), held: held)
        }
        let anonymous = DynamicSecurityRoles.anonymousGroup
        bring(anonymous, to: DynamicSecurityRoles.anonymousACLs(topics: topics), held: held)

        let accounts = DynamicSecurityAccount.accounts(clients: clients, roles: roles, admin: admin)
        for account in accounts {
            guard let kind = account.role else {
                leftAlone.append("\(account.name) (\(account.roleText))")
                continue
            }
            if kind == .sensor && account.sensors.isEmpty {
                warnings.append(
                    "the sensor node \(account.name) has no sensor addresses in its role user/\(account.name): "
                        + "give them with `trellis users add \(account.name) --sensor ADDRESS…`")
            }
            if kind != .trellis {
                bring(
                    DynamicSecurityRoles.personalRole(of: account.name),
                    to: DynamicSecurityRoles.personalACLs(
                        of: account.name, role: kind, sensors: account.sensors, topics: topics),
                    held: held)
            }
        }

        let group = groups.first { $0.groupname == anonymous }
        let groupRoles = (group?.roles ?? []).map(\.rolename)
        if group == nil {
            commands.append(.createGroup(anonymous, roles: [anonymous]))
            changes.append("made the group \(anonymous) (clients without an account) with the role \(anonymous)")
        } else if groupRoles != [anonymous] {
            for role in groupRoles where role != anonymous { commands.append(.removeGroupRole(anonymous, role: role)) }
            if !groupRoles.contains(anonymous) { commands.append(.addGroupRole(anonymous, role: anonymous)) }
            changes.append("gave the group \(anonymous) the role \(anonymous) alone (it had \(Self.list(groupRoles)))")
        }
        if anonymousGroup != anonymous {
            commands.append(.setAnonymousGroup(anonymous))
            changes.append(
                "made \(anonymous) the group of clients without an account (it was \(anonymousGroup ?? "none"))")
        }

        for account in accounts {
            guard let kind = account.role else { continue }
            let wanted = DynamicSecurityRoles.roles(of: account.name, role: kind)
            // The plugin lists a client's roles by priority, not in the order they were given.
            guard Set(account.roles) != Set(wanted) || account.roles.count != wanted.count else { continue }
            commands.append(.modifyClient(account.name, password: nil, roles: wanted))
            changes.append("gave \(account.name) the roles \(Self.list(wanted)) (it had \(Self.list(account.roles)))")
        }
    }

    /// Makes `role` with `wanted`, or removes the ACLs it holds beyond them and adds the missing.
    private mutating func bring(_ role: String, to wanted: [DynamicSecurityACL], held: [String: [DynamicSecurityACL]]) {
        var seen: Set<String> = []
        let wanted = wanted.filter { seen.insert("\($0.acltype) \($0.topic)").inserted }
        guard let current = held[role] else {
            commands.append(.createRole(role, acls: wanted))
            changes.append("made the role \(role) (\(wanted.count) ACLs)")
            return
        }
        let removed = current.filter { !wanted.contains($0) }
        let added = wanted.filter { !current.contains($0) }
        guard !removed.isEmpty || !added.isEmpty else { return }
        commands += removed.map { .removeRoleACL(role, $0) } + added.map { .addRoleACL(role, $0) }
        changes.append(
            "brought the role \(role) to the table: \(removed.count) ACLs removed "
                + "(\(removed.prefix(3).map { "\($0.acltype) \($0.topic)" }.joined(separator: ", "))\(removed.count > 3 ? ", …" : "")), "
                + "\(added.count) added")
    }

    private static func list(_ names: [String]) -> String {
        names.isEmpty ? "none" : names.joined(separator: ", ")
    }
}

extension DynamicSecurityCommand {
    public static func addRoleACL(_ rolename: String, _ acl: DynamicSecurityACL) -> Self {
        var command = Self("addRoleACL")
        command.rolename = rolename
        command.acltype = acl.acltype
        command.topic = acl.topic
        command.allow = acl.allow
        return command
    }

    /// Removes the role's ACL of this type and topic (the plugin holds one of each).
    public static func removeRoleACL(_ rolename: String, _ acl: DynamicSecurityACL) -> Self {
        var command = Self("removeRoleACL")
        command.rolename = rolename
        command.acltype = acl.acltype
        command.topic = acl.topic
        return command
    }

    public static func createGroup(_ groupname: String, roles: [String]) -> Self {
        var command = Self("createGroup")
        command.groupname = groupname
        command.roles = roles.map(DynamicSecurityRoleReference.init)
        return command
    }

    public static func addGroupRole(_ groupname: String, role: String) -> Self {
        var command = Self("addGroupRole")
        command.groupname = groupname
        command.rolename = role
        return command
    }

    public static func removeGroupRole(_ groupname: String, role: String) -> Self {
        var command = Self("removeGroupRole")
        command.groupname = groupname
        command.rolename = role
        return command
    }

    /// Makes `groupname` the group of clients without an account.
    public static func setAnonymousGroup(_ groupname: String) -> Self {
        var command = Self("setAnonymousGroup")
        command.groupname = groupname
        return command
    }

    /// Every group with its roles, and the group of clients without an account.
    public static let listGroups: Self = {
        var command = Self("listGroups"); command.verbose = true; return command
    }()
    public static let getAnonymousGroup = Self("getAnonymousGroup")
}
