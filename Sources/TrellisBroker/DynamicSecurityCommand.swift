/// One command of Mosquitto's dynamic security plugin, as the JSON object it reads from
/// `$CONTROL/dynamic-security/v1` (inside `{"commands":[…]}`); the plugin answers every command of a
/// request, in order, on `$CONTROL/dynamic-security/v1/response`. Only the fields a command needs
/// are set; the others are left out of the JSON. A value may hold a password: it is encoded for the
/// broker alone and never printed.
public struct DynamicSecurityCommand: Encodable, Sendable, Equatable {
    /// The topic the plugin reads commands from, and the one it answers on.
    public static let topic = "$CONTROL/dynamic-security/v1"
    public static let responseTopic = "$CONTROL/dynamic-security/v1/response"

    public var command: String
    public var username: String?
    public var password: String?
    public var rolename: String?
    public var groupname: String?
    public var textname: String?
    public var roles: [DynamicSecurityRoleReference]?
    public var acls: [DynamicSecurityACL]?
    /// One ACL of `addRoleACL` and `removeRoleACL`, given in the command itself.
    public var acltype: String?
    public var topic: String?
    public var allow: Bool?
    public var verbose: Bool?
    /// Echoed by the plugin in its answer, so a request's answer is told from another client's.
    public var correlationData: String?

    public init(_ command: String) {
        self.command = command
    }

    public static func createClient(
        _ username: String, password: String?, textname: String? = nil,
        roles: [String]
    ) -> Self {
        var command = Self("createClient")
        command.username = username
        command.password = password
        command.textname = textname
        command.roles = roles.map(DynamicSecurityRoleReference.init)
        return command
    }

    /// Changes an existing client: its password when one is given, and its whole list of roles.
    public static func modifyClient(
        _ username: String, password: String?, textname: String? = nil,
        roles: [String]
    ) -> Self {
        var command = createClient(username, password: password, textname: textname, roles: roles)
        command.command = "modifyClient"
        return command
    }

    public static func setClientPassword(_ username: String, password: String) -> Self {
        var command = Self("setClientPassword")
        command.username = username
        command.password = password
        return command
    }

    /// Deletes a client; the plugin disconnects it at once.
    public static func deleteClient(_ username: String) -> Self {
        var command = Self("deleteClient")
        command.username = username
        return command
    }

    public static func getClient(_ username: String) -> Self {
        var command = Self("getClient")
        command.username = username
        return command
    }

    public static func createRole(_ rolename: String, acls: [DynamicSecurityACL]) -> Self {
        var command = Self("createRole")
        command.rolename = rolename
        command.acls = acls
        return command
    }

    public static func deleteRole(_ rolename: String) -> Self {
        var command = Self("deleteRole")
        command.rolename = rolename
        return command
    }

    /// Every client with its roles (`verbose`), or every role with its ACLs.
    public static let listClients: Self = {
        var command = Self("listClients"); command.verbose = true; return command
    }()
    public static let listRoles: Self = {
        var command = Self("listRoles"); command.verbose = true; return command
    }()
}

/// A role given to a client.
public struct DynamicSecurityRoleReference: Codable, Sendable, Equatable {
    public var rolename: String

    public init(_ rolename: String) {
        self.rolename = rolename
    }
}

/// One ACL of a role: `acltype` is `publishClientSend`, `publishClientReceive`, `subscribePattern`,
/// `subscribeLiteral`, `unsubscribePattern` or `unsubscribeLiteral`.
public struct DynamicSecurityACL: Codable, Sendable, Equatable {
    public var acltype: String
    public var topic: String
    public var allow: Bool

    public init(_ acltype: String, _ topic: String, allow: Bool = true) {
        self.acltype = acltype
        self.topic = topic
        self.allow = allow
    }
}

/// The plugin's answer to a request: one entry per command, in order.
public struct DynamicSecurityResponse: Decodable, Sendable {
    public struct Answer: Decodable, Sendable {
        public var command: String
        /// The plugin's reason when the command failed, such as `Client not found`.
        public var error: String?
        public var correlationData: String?
        public var data: Data?
    }

    /// What `listClients`, `listRoles` and `getClient` return (verbose).
    public struct Data: Decodable, Sendable {
        public var clients: [Client]?
        public var roles: [Role]?
        public var client: Client?
        /// `listGroups` (verbose) and `getAnonymousGroup`.
        public var groups: [Group]?
        public var group: Group?
    }

    public struct Group: Decodable, Sendable {
        public var groupname: String
        public var roles: [DynamicSecurityRoleReference]?

        public init(groupname: String, roles: [DynamicSecurityRoleReference]? = nil) {
            self.groupname = groupname
            self.roles = roles
        }
    }

    public struct Client: Decodable, Sendable {
        public var username: String
        public var textname: String?
        public var roles: [DynamicSecurityRoleReference]?

        public init(username: String, roles: [DynamicSecurityRoleReference]? = nil) {
            self.username = username
            self.roles = roles
        }
    }

    public struct Role: Decodable, Sendable {
        public var rolename: String
        public var acls: [DynamicSecurityACL]?

        public init(rolename: String, acls: [DynamicSecurityACL]? = nil) {
            self.rolename = rolename
            self.acls = acls
        }
    }

    public var responses: [Answer]
}
