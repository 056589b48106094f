import TrellisBroker

/// The accounts of the dynamic security profile (broker.dynsec.conf), changed over MQTT through
/// the plugin: in effect as soon as the plugin answered, with neither a SIGHUP nor a restart.
package struct DynamicSecurityAccounts: AccountStore {
    package var control: DynamicSecurityControl
    /// The topic prefixes the roles are written with: those of the configuration `trellis run` reads.
    package var topics = AccessControlList.Topics()

    package init(control: DynamicSecurityControl, topics: AccessControlList.Topics = AccessControlList.Topics()) {
        self.control = control
        self.topics = topics
    }

    package var effect: String { "in effect now" }

    package func set(_ name: String, role: AccessControlList.Role, sensors: [String], password: String) async throws {
        try await run { connection in
            let exists =
                try await connection.run([.init(command: .getClient(name), tolerated: ["Client not found"])])[0].error
                == nil
            let shared = DynamicSecurityRoles.sharedRole(of: role)
            let personal = DynamicSecurityRoles.personalRole(of: name)
            // The shared role is made when missing (a plugin configured by hand); an old own role
            // is replaced whole, so a change of role or sensors leaves nothing of the old rights.
            var steps: [DynamicSecurityControl.Step] = [
                .init(
                    command: .createRole(shared, acls: DynamicSecurityRoles.sharedACLs(of: role, topics: topics)),
                    tolerated: ["Role already exists"])
            ]
            // An account lets go of its roles before its own is deleted: the plugin (Mosquitto 2.0.11,
            // Debian 12's, and 2.0.15 in eclipse-mosquitto/mosquitto#2660) leaves a deleted role in
            // the lists of the clients that hold it, freed, so a later listing reads garbage and a
            // later deletion of the client may crash the broker.
            if exists { steps.append(.init(command: .modifyClient(name, password: nil, roles: []))) }
            steps.append(.init(command: .deleteRole(personal), tolerated: ["Role not found"]))
            if role != .trellis {
                steps.append(
                    .init(
                        command: .createRole(
                            personal,
                            acls: DynamicSecurityRoles.personalACLs(
                                of: name, role: role, sensors: sensors, topics: topics))))
            }
            let roles = DynamicSecurityRoles.roles(of: name, role: role)
            steps.append(
                .init(
                    command: exists
                        ? .modifyClient(name, password: password, roles: roles)
                        : .createClient(name, password: password, roles: roles)))
            try await connection.run(steps)
        }
    }

    package func remove(_ name: String) async throws {
        try await run { connection in
            let answers = try await connection.run([
                .init(command: .deleteClient(name), tolerated: ["Client not found"]),
                .init(command: .deleteRole(DynamicSecurityRoles.personalRole(of: name)), tolerated: ["Role not found"])
            ])
            if answers[0].error != nil { throw fail("there is no account \(name) in the dynamic security plugin") }
        }
    }

    /// Sorted by name.
    package func list() async throws -> [(name: String, role: String)] {
        try await run { connection in
            let answers = try await connection.run([.init(command: .listClients), .init(command: .listRoles)])
            let accounts = DynamicSecurityAccount.accounts(
                clients: answers[0].data?.clients ?? [],
                roles: answers[1].data?.roles ?? [], admin: control.admin)
            return accounts.sorted { $0.name < $1.name }.map { ($0.name, $0.roleText) }
        }
    }

    package func setPassword(_ name: String, password: String) async throws -> AccessControlList.Role? {
        try await run { connection in
            let found = try await connection.run([.init(command: .getClient(name), tolerated: ["Client not found"])])[0]
            guard found.error == nil else { throw fail("there is no account \(name) in the dynamic security plugin") }
            try await connection.run([.init(command: .setClientPassword(name, password: password))])
            return (found.data?.client?.roles ?? []).lazy.compactMap {
                DynamicSecurityRoles.role(ofShared: $0.rolename)
            }.first
        }
    }

    /// Reads the plugin's clients, roles and groups, and sends what ``DynamicSecuritySync`` works
    /// out from them as one request.
    package func sync() async throws -> SyncReport {
        try await run { connection in
            let answers = try await connection.run([
                .init(command: .listClients), .init(command: .listRoles),
                .init(command: .listGroups), .init(command: .getAnonymousGroup)
            ])
            let plan = DynamicSecuritySync(
                clients: answers[0].data?.clients ?? [], roles: answers[1].data?.roles ?? [],
                groups: answers[2].data?.groups ?? [], anonymousGroup: answers[3].data?.group?.groupname,
                admin: control.admin, topics: topics)
            if !plan.commands.isEmpty { try await connection.run(plan.commands.map { .init(command: $0) }) }
            return SyncReport(changes: plan.changes, leftAlone: plan.leftAlone, warnings: plan.warnings)
        }
    }

    /// Runs `body` with a logged-in connection; a command the plugin refused becomes one line on standard error.
    private func run<T>(_ body: (DynamicSecurityControl.Connection) async throws -> T) async throws -> T {
        do {
            return try await control.connected(body)
        } catch let failure as DynamicSecurityFailure {
            throw fail(failure.description)
        }
    }
}
