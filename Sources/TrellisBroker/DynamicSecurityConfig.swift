import TrellisCore
import Foundation

/// The dynamic security plugin's configuration file (`plugin_opt_config_file`), as Mosquitto 2.0
/// reads and writes it. `trellis users init` and `trellis users migrate` write it before the broker
/// starts with the plugin; from then on the plugin owns it and accounts change over MQTT.
///
/// The profile's defaults deny everything a role does not allow: publishing, subscribing and, so a
/// `read` right means what it means in the ACL file, receiving; unsubscribing is always allowed.
public struct DynamicSecurityConfig: Codable, Sendable {
    public struct Client: Codable, Sendable {
        public var username: String
        public var textName: String?
        /// PBKDF2-SHA512 hash, salt (both base64) and iteration count; absent for an account
        /// without a password, which cannot log in.
        public var password: String?
        public var salt: String?
        public var iterations: Int?
        public var roles: [DynamicSecurityRoleReference]
    }

    public struct Role: Codable, Sendable {
        public var rolename: String
        public var acls: [DynamicSecurityACL]
    }

    /// A group: the plugin's way to give clients without an account (``anonymousGroup``) a role.
    public struct Group: Codable, Sendable {
        public var groupname: String
        public var roles: [DynamicSecurityRoleReference]
        public var clients: [Member]

        public struct Member: Codable, Sendable {
            public var username: String
        }
    }

    public struct DefaultAccess: Codable, Sendable {
        public var publishClientSend = false
        public var publishClientReceive = false
        public var subscribe = false
        public var unsubscribe = true
    }

    public var clients: [Client]
    public var roles: [Role]
    public var groups: [Group]?
    /// The group of clients without an account, where the broker lets them in.
    public var anonymousGroup: String?
    public var defaultACLAccess: DefaultAccess

    /// The profile with its administration account (`adminHash` is its `$7$` password hash) and
    /// the shared role of every kind of account, and no account yet.
    public init(admin: String, adminHash: PBKDF2Hash, topics: AccessControlList.Topics = .init()) {
        clients = [
            Client(
                username: admin, textName: "administers the accounts (trellis users)", password: adminHash.hash,
                salt: adminHash.salt, iterations: adminHash.iterations,
                roles: [DynamicSecurityRoleReference(DynamicSecurityRoles.adminRole)])
        ]
        roles =
            [Role(rolename: DynamicSecurityRoles.adminRole, acls: DynamicSecurityRoles.adminACLs)]
            + AccessControlList.Role.allCases.map {
                Role(
                    rolename: DynamicSecurityRoles.sharedRole(of: $0),
                    acls: DynamicSecurityRoles.sharedACLs(of: $0, topics: topics))
            }
            + [
                Role(
                    rolename: DynamicSecurityRoles.anonymousGroup,
                    acls: DynamicSecurityRoles.anonymousACLs(topics: topics))
            ]
        groups = [
            Group(
                groupname: DynamicSecurityRoles.anonymousGroup,
                roles: [DynamicSecurityRoleReference(DynamicSecurityRoles.anonymousGroup)], clients: [])
        ]
        anonymousGroup = DynamicSecurityRoles.anonymousGroup
        defaultACLAccess = DefaultAccess()
    }

    /// Adds an account of `role` with its own role; `hash` nil makes one that cannot log in until
    /// it is given a password.
    public mutating func add(
        _ name: String, role: AccessControlList.Role, sensors: [String] = [], hash: PBKDF2Hash?,
        topics: AccessControlList.Topics = .init()
    ) {
        clients.removeAll { $0.username == name }
        roles.removeAll { $0.rolename == DynamicSecurityRoles.personalRole(of: name) }
        if role != .trellis {
            roles.append(
                Role(
                    rolename: DynamicSecurityRoles.personalRole(of: name),
                    acls: DynamicSecurityRoles.personalACLs(of: name, role: role, sensors: sensors, topics: topics)))
        }
        clients.append(
            Client(
                username: name, password: hash?.hash, salt: hash?.salt, iterations: hash?.iterations,
                roles: DynamicSecurityRoles.roles(of: name, role: role).map(DynamicSecurityRoleReference.init)))
    }

    /// The file's text: JSON with sorted keys, as the plugin reads it.
    public func render() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self) + "\n"
    }
}
