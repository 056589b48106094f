import Foundation
import Testing
import TrellisBroker
import TrellisCore
import TrellisMQTT
import TrellisTestSupport

/// Every cell of ``TopicAccessTable`` on a real Mosquitto, for both account backends (the ACL file
/// and the dynamic security plugin), with anonymous clients let in as on a LAN: for each role and
/// each row, a topic naming the role's own account and one naming another, published and read,
/// each allowed or refused exactly as the table says.
@Suite("Topic access on a real broker", .serialized)
struct TopicAccessMatrixTests {
    /// One account per role (anonymous has none); a sensor node owns the sensor 0x36.
    static let accounts: [(name: String, role: AccessControlList.Role, sensors: [String])] = [
        ("trellis", .trellis, []), ("alice", .client, []), ("door", .button, []), ("node1", .device, []),
        ("pi1", .sensor, ["0x36"]), ("ha", .homeassistant, []), ("ops", .operator, [])
    ]

    static func account(of role: AccessRole) -> (name: String, role: AccessControlList.Role, sensors: [String])? {
        accounts.first { $0.role.accessRole == role }
    }

    /// The name a role's own grants stand for in a topic: its account's (a sensor's address).
    static func ownName(of role: AccessRole) -> String? {
        guard let account = account(of: role) else { return nil }
        return account.sensors.first ?? account.name
    }

    /// The concrete topics of a row: its `{name}` as each role's own name and as a stranger's, its
    /// wildcards as plain levels.
    static func topics(of row: TopicAccessTable.Row) -> [String] {
        let template = TopicPrefixes().expand(row.topic)
        let names = template.contains("{name}") ? AccessRole.allCases.compactMap(ownName(of:)) + ["stranger"] : ["-"]
        return Set(
            names.map { name in
                template.replacingOccurrences(of: "{name}", with: name).split(
                    separator: "/", omittingEmptySubsequences: false
                )
                .map { $0 == "+" ? "x" : $0 == "#" ? "x/y" : String($0) }.joined(separator: "/")
            }
        ).sorted()
    }

    static let cells: [String] = Set(TopicAccessTable.rows.flatMap(topics(of:)) + ["some/other/topic"]).sorted()

    /// Whether the table lets `role` publish (or read) `topic`: some row grants it, on its own name
    /// only or on every name.
    static func allowed(_ role: AccessRole, _ topic: String, publish: Bool) -> Bool {
        TopicAccessTable.rows.contains { row in
            (publish ? row.publish : row.read).contains { grant in
                guard grant.role == role else { return false }
                let name = grant.scope == .own ? (ownName(of: role) ?? "") : "+"
                let filter = TopicPrefixes().expand(row.topic).replacingOccurrences(of: "{name}", with: name)
                return TopicFilter(filter).match(topic) != nil
            }
        }
    }

    @Test("the cells an attacker tries first are refused as the issue names them")
    func attacksNamed() {
        #expect(!Self.allowed(.anonymous, "trellis/request/models/upload", publish: true))
        #expect(!Self.allowed(.anonymous, "trellis/request/store/backup", publish: true))
        #expect(!Self.allowed(.anonymous, "trellis/deadletter", publish: false))
        #expect(!Self.allowed(.anonymous, "some/other/topic", publish: false))
        #expect(
            Self.allowed(.anonymous, "rpi/torpi", publish: true)
                && Self.allowed(.anonymous, "rpi/fromrpi", publish: false))
        #expect(!Self.allowed(.sensor, "rpi/torpi/pi1", publish: true), "a sensor node sends no plant request")
        #expect(!Self.allowed(.sensor, "trellis/clients/pi1/request/models/code", publish: true))
        #expect(!Self.allowed(.sensor, "rpi/sensors/0x37", publish: true), "only its own sensors")
        #expect(!Self.allowed(.button, "p2o/buttons/bell/press", publish: true), "only its own presses")
        #expect(!Self.allowed(.device, "devices/node1/command", publish: true), "a device cannot forge its commands")
        #expect(!Self.allowed(.app, "rpi/fromrpi/stranger", publish: false), "no other app's replies")
        #expect(!Self.allowed(.operator, "rpi/fromrpi", publish: true), "an operator cannot forge Trellis's replies")
    }

    enum Backend: String, CaseIterable { case aclFile, dynamicSecurity }

    @Test("every cell of the table, allowed and refused", arguments: Backend.allCases)
    func everyCell(backend: Backend) async throws {
        let directory = temporaryDirectory()
        let config = try await Self.brokerConfig(backend, in: directory)
        try await withTestBroker(anonymous: true, extraConfig: config) { broker in
            let trellis = try await Self.connect(broker, as: "trellis")
            let watcher = await MessageCollector.collecting(trellis)
            try await trellis.subscribe("#")
            var wrong: [String] = []
            for role in AccessRole.allCases where role != .trellis {
                let client = try await Self.connect(broker, as: Self.account(of: role)?.name)
                wrong += try await Self.publishCells(of: role, client: client, watcher: watcher)
                wrong += try await Self.readCells(of: role, client: client, publisher: trellis)
                await client.shutdown()
            }
            await trellis.shutdown()
            #expect(
                wrong.isEmpty,
                "\(backend): cells the broker decided otherwise than the table:\n\(wrong.joined(separator: "\n"))")
        }
    }

    /// Publishes every cell as `role` and reports those whose delivery differs from the table.
    static func publishCells(of role: AccessRole, client: MQTTClient, watcher: MessageCollector) async throws
        -> [String]
    {
        await watcher.reset()
        for topic in cells { try? await client.publishAndWait(topic: topic, payload: Array("\(role)".utf8)) }
        let sentinel = try #require(cells.first { allowed(role, $0, publish: true) }, "\(role) may publish nothing")
        let end = "end of \(role)'s publishes"
        try await client.publishAndWait(topic: sentinel, payload: Array(end.utf8))
        try await watcher.wait(timeout: .seconds(20), end) { $0.contains { $0.text == end } }
        let delivered = Set(await watcher.all().filter { $0.text == "\(role)" }.map(\.topic))
        return cells.compactMap { topic in
            allowed(role, topic, publish: true) == delivered.contains(topic)
                ? nil
                : "\(role) publish \(topic): table \(allowed(role, topic, publish: true)), broker \(delivered.contains(topic))"
        }
    }

    /// Subscribes `role` to every cell (and to `#`), has Trellis publish on each, and reports the
    /// cells whose delivery differs from the table.
    static func readCells(of role: AccessRole, client: MQTTClient, publisher: MQTTClient) async throws -> [String] {
        let inbox = await MessageCollector.collecting(client)
        for topic in cells + ["#"] { try? await client.subscribe(topic) }
        for topic in cells { try await publisher.publishAndWait(topic: topic, payload: Array("read".utf8)) }
        let sentinel = try #require(cells.first { allowed(role, $0, publish: false) }, "\(role) may read nothing")
        let end = "end of \(role)'s reads"
        try await publisher.publishAndWait(topic: sentinel, payload: Array(end.utf8))
        try await inbox.wait(timeout: .seconds(20), end) { $0.contains { $0.text == end } }
        let delivered = Set(await inbox.all().filter { $0.text == "read" }.map(\.topic))
        return cells.compactMap { topic in
            allowed(role, topic, publish: false) == delivered.contains(topic)
                ? nil
                : "\(role) read \(topic): table \(allowed(role, topic, publish: false)), broker \(delivered.contains(topic))"
        }
    }

    /// Logs in as `name` (anonymous when nil) with the password every account has here.
    static func connect(_ broker: TestBroker, as name: String?) async throws -> MQTTClient {
        let client = try MQTTClient(
            configuration: MQTTConfiguration(
                host: broker.host, port: broker.port, clientID: name ?? "anonymous-\(UUID().uuidString.prefix(8))",
                username: name, password: name.map { "pw-\($0)" }, reconnectDelay: 0.2...0.5))
        client.start()
        try await client.waitUntilConnected(timeout: .seconds(20))
        return client
    }

    /// The broker lines of `backend` with every account of ``accounts``, written by the project's
    /// own writers (`AccessControlList`, `DynamicSecurityConfig`), hashed by `mosquitto_passwd`.
    static func brokerConfig(_ backend: Backend, in directory: String) async throws -> [String] {
        let passwd = directory + "/passwd"
        try accounts.map { "\($0.name):pw-\($0.name)" }.joined(separator: "\n").appending("\n")
            .write(toFile: passwd, atomically: true, encoding: .utf8)
        let hasher = try TrellisBinary.start(["-U", passwd], executable: "/usr/bin/mosquitto_passwd")
        #expect(try await hasher.waitForExit() == 0)
        switch backend {
        case .aclFile:
            var acl = AccessControlList()
            for account in accounts { acl.set(account.name, role: account.role, sensors: account.sensors) }
            try acl.render().write(toFile: directory + "/acl", atomically: true, encoding: .utf8)
            return ["password_file \(passwd)", "acl_file \(directory)/acl"]
        case .dynamicSecurity:
            let hashes = Dictionary(
                uniqueKeysWithValues: MosquittoPasswordEntry.parse(try String(contentsOfFile: passwd, encoding: .utf8))
                    .map { ($0.username, $0.pbkdf2) })
            var config = DynamicSecurityConfig(admin: "admin", adminHash: try #require(hashes["ops"] ?? nil))
            for account in accounts {
                config.add(
                    account.name, role: account.role, sensors: account.sensors, hash: hashes[account.name] ?? nil)
            }
            try config.render().write(toFile: directory + "/dynsec.json", atomically: true, encoding: .utf8)
            let plugin = try #require(DynamicSecurityPlugin.path, "mosquitto_dynamic_security.so is not installed")
            return ["plugin \(plugin)", "plugin_opt_config_file \(directory)/dynsec.json"]
        }
    }
}

/// docs/security.md shows the topic table as the code declares it.
@Suite("The security page's topic table")
struct SecurityDocsTests {
    @Test("docs/security.md holds TopicAccessTable.markdown() between its markers")
    func tableMatches() throws {
        let page = try MarkdownDocument(path: "docs/security.md").text
        let start = try #require(page.range(of: "<!-- topic-table -->\n"))
        let end = try #require(page.range(of: "\n<!-- end:topic-table -->", range: start.upperBound..<page.endIndex))
        let shown = String(page[start.upperBound..<end.lowerBound])
        #expect(
            shown == TopicAccessTable.markdown(),
            "docs/security.md's table is stale; it should read:\n\(TopicAccessTable.markdown())")
    }
}

extension SecurityDocsTests {
    /// docs/operations.md's table of the dynamic security plugin's roles, as the code derives them.
    static func dynamicSecurityRolesTable() -> String {
        let kinds: [(flag: String, role: AccessControlList.Role)] = [
            ("(no flag): a client, an app", .client), ("`--button`", .button), ("`--device`", .device),
            ("`--sensor 0x36 0x37`", .sensor), ("`--home-assistant`", .homeassistant), ("`--operator`", .operator),
            ("`--trellis`", .trellis)
        ]
        func cell(_ rights: [TopicRight]) -> String {
            rights.isEmpty ? "(none)" : rights.map { "\($0.access.rawValue) `\($0.topic)`" }.joined(separator: ", ")
        }
        let rows = kinds.map { kind in
            "| \(kind.flag) | `\(DynamicSecurityRoles.sharedRole(of: kind.role))` | "
                + "\(cell(AccessControlList.personalRights(of: "NAME", role: kind.role, sensors: ["0x36", "0x37"]))) | "
                + "\(cell(AccessControlList.sharedRights(of: kind.role))) |"
        }
        return
            ([
                "| `trellis users add` | shared role | own role `user/NAME` adds | shared role holds |",
                "|---|---|---|---|"
            ] + rows)
            .joined(separator: "\n")
    }

    @Test("docs/operations.md's dynamic security roles are the ones the code makes")
    func dynamicSecurityRoles() throws {
        let page = try MarkdownDocument(path: "docs/operations.md").text
        let start = try #require(page.range(of: "<!-- dynsec-roles -->\n"))
        let end = try #require(page.range(of: "\n<!-- end:dynsec-roles -->", range: start.upperBound..<page.endIndex))
        let expected = Self.dynamicSecurityRolesTable()
        #expect(
            String(page[start.upperBound..<end.lowerBound]) == expected,
            "docs/operations.md's roles are stale; they should read:\n\(expected)\nEND")
    }
}
