import Foundation
import Testing
import TrellisBroker
import TrellisCore
import TrellisMQTT
import TrellisTestSupport

/// `trellis users sync` with the dynamic security plugin: accounts made by an older Trellis keep
/// the rights they were given until it runs; then each has exactly its row of the table.
@Suite("users sync on the dynamic security plugin", .serialized)
struct DynamicSecuritySyncTests {
    /// Gives the plugin's configuration at `path` an older Trellis's rights: every shared role but
    /// the administration's and Trellis's may publish and read everything, every account's own
    /// role may also send operator requests and read everything, alice has no role of her own,
    /// there is no group for clients without an account; and a client made by hand, `gadget`.
    static func ageConfiguration(at path: String) throws {
        var json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        let everything: [[String: Any]] = ["publishClientSend", "subscribePattern", "publishClientReceive"].map {
            ["acltype": $0, "topic": "#", "allow": true]
        }
        var roles = try #require(json["roles"] as? [[String: Any]])
        roles = roles.filter { !["anonymous", "user/alice"].contains($0["rolename"] as? String) }.map { role in
            var role = role
            let name = role["rolename"] as? String ?? ""
            if name.hasPrefix("user/") {
                role["acls"] =
                    (role["acls"] as? [[String: Any]] ?? []) + [
                        ["acltype": "publishClientSend", "topic": "trellis/request/#", "allow": true],
                        ["acltype": "subscribePattern", "topic": "#", "allow": true],
                        ["acltype": "publishClientReceive", "topic": "#", "allow": true]
                    ]
            } else if !["admin", "trellis"].contains(name) {
                role["acls"] = everything
            }
            return role
        }
        roles.append(["rolename": "custom", "acls": everything])
        json["roles"] = roles
        var clients = try #require(json["clients"] as? [[String: Any]])
        clients = clients.map { client in
            var client = client
            if client["username"] as? String == "alice" { client["roles"] = [["rolename": "app"]] }
            return client
        }
        clients.append(["username": "gadget", "roles": [["rolename": "custom"]]])
        json["clients"] = clients
        json["groups"] = []
        json["anonymousGroup"] = nil
        try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]).write(to: URL(fileURLWithPath: path))
    }

    /// The cells of the table the broker decides otherwise for `roles`.
    static func wrongCells(_ broker: TestBroker, roles: [AccessRole]) async throws -> [String] {
        let trellis = try await TopicAccessMatrixTests.connect(broker, as: "trellis")
        let watcher = await MessageCollector.collecting(trellis)
        try await trellis.subscribe("#")
        var wrong: [String] = []
        for role in roles {
            let client = try await TopicAccessMatrixTests.connect(
                broker, as: TopicAccessMatrixTests.account(of: role)?.name)
            wrong += try await TopicAccessMatrixTests.publishCells(of: role, client: client, watcher: watcher)
            wrong += try await TopicAccessMatrixTests.readCells(of: role, client: client, publisher: trellis)
            await client.shutdown()
        }
        await trellis.shutdown()
        return wrong
    }

    @Test(
        "an older Trellis's broader rights are narrowed to the table, every account still works, a second sync changes nothing"
    )
    func narrows() async throws {
        let directory = temporaryDirectory()
        let config = try await TopicAccessMatrixTests.brokerConfig(.dynamicSecurity, in: directory)
        try Self.ageConfiguration(at: directory + "/dynsec.json")
        // The matrix's administration account `admin` has ops's password.
        try "pw-ops\n".write(toFile: directory + "/admin.password", atomically: true, encoding: .utf8)
        try await withTestBroker(anonymous: true, extraConfig: config) { broker in
            let before = try await Self.wrongCells(broker, roles: [.sensor])
            #expect(
                before.contains { $0.hasPrefix("sensor publish trellis/request/") },
                "a sensor node may send operator requests before")
            #expect(before.contains { $0.hasPrefix("sensor read rpi/fromrpi") }, "and read the apps' replies")

            let sync = [
                "users", "sync", "--broker", broker.address, "--admin-user", "admin",
                "--admin-password-file", directory + "/admin.password", "--timeout", "20"
            ]
            let first = try await TrellisBinary.run(sync, in: directory, timeout: .seconds(150))
            #expect(first.status == 0, "\(first.output)")
            for line in [
                "brought the role sensor to the table", "made the role user/alice", "made the role anonymous",
                "made the group anonymous", "made anonymous the group of clients without an account",
                "gave alice the roles app, user/alice", "left alone gadget"
            ] {
                #expect(first.output.contains(line), "\(line): \(first.output)")
            }
            #expect(!first.output.contains("brought the role trellis"), "Trellis's role was right already")
            #expect(!first.output.contains("warning:"), "every sensor node keeps its addresses")

            let after = try await Self.wrongCells(broker, roles: AccessRole.allCases.filter { $0 != .trellis })
            #expect(
                after.isEmpty,
                "cells the broker decided otherwise than the table after sync:\n\(after.joined(separator: "\n"))")

            let second = try await TrellisBinary.run(sync, in: directory, timeout: .seconds(150))
            #expect(
                second.status == 0 && second.output.contains("every account's rights already match the topic table"),
                "\(second.output)")
            #expect(second.output.contains("left alone gadget"))
        }
    }

    @Test("the plugin's configuration this version writes needs no change")
    func freshNeedsNothing() {
        var config = DynamicSecurityConfig(
            admin: "admin", adminHash: PBKDF2Hash(iterations: 101, salt: "c2FsdA==", hash: "aGFzaA=="))
        for account in TopicAccessMatrixTests.accounts {
            config.add(account.name, role: account.role, sensors: account.sensors, hash: nil)
        }
        let plan = DynamicSecuritySync(
            clients: config.clients.map { .init(username: $0.username, roles: Array($0.roles.reversed())) },
            roles: config.roles.map { .init(rolename: $0.rolename, acls: Array($0.acls.reversed())) },
            groups: (config.groups ?? []).map { .init(groupname: $0.groupname, roles: $0.roles) },
            anonymousGroup: config.anonymousGroup, admin: "admin")
        #expect(plan.commands.isEmpty && plan.changes.isEmpty && plan.leftAlone.isEmpty, "\(plan.changes)")
    }
}
