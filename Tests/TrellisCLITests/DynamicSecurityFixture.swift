import Foundation
import TrellisMQTT
import TrellisTestSupport
import TrellisApplication
import TrellisCore

/// A real Mosquitto with the real dynamic security plugin, its configuration written by
/// `trellis users init`'s writer (or `migrate`), and `trellis users` pointed at it.
struct DynamicSecurityFixture {
    let directory: String
    let broker: TestBroker

    var config: String { directory + "/dynamic-security.json" }
    var adminPasswordFile: String { directory + "/admin.password" }

    /// The options every `trellis users` command gets: the broker and the administration password.
    var connection: [String] {
        // A generous wait for each answer: on a loaded machine the broker answers late, never wrongly.
        ["--broker", broker.address, "--admin-password-file", adminPasswordFile, "--timeout", "20"]
    }

    /// Runs `trellis users ARGUMENTS` against this broker. The process gets longer than its login
    /// and several answers could take, so a command that gives up says why before it is stopped.
    func users(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await TrellisBinary.run(["users"] + arguments + connection, in: directory, timeout: .seconds(150))
    }

    /// Adds an account and expects success.
    func add(_ name: String, password: String, _ flags: [String] = []) async throws {
        let result = try await users(
            [
                "add", name, "--password", password,
                "--trellis-password-file", directory + "/\(name).password"
            ] + flags)
        guard result.status == 0 else { throw TimeoutError(message: "users add \(name) failed: \(result.output)") }
    }

    /// The roles of the account `name` in the configuration the plugin saves after every change.
    func savedRoles(of name: String) throws -> [String] {
        struct Saved: Decodable {
            struct Client: Decodable {
                struct Role: Decodable { var rolename: String }
                var username: String
                var roles: [Role]?
            }
            var clients: [Client]
        }
        let saved = try JSONDecoder().decode(Saved.self, from: Data(contentsOf: URL(fileURLWithPath: config)))
        return saved.clients.first { $0.username == name }?.roles?.map(\.rolename) ?? []
    }

    /// A connected client logged in as `name`.
    func login(_ name: String, password: String) async throws -> MQTTClient {
        try await TestClients.connect(to: broker, id: name) {
            $0.username = name; $0.password = password
        }
    }

    /// Runs `body` with a broker whose plugin configuration `prepare` wrote into the test's directory
    /// (by default `trellis users init`).
    static func with(
        prepare: ((String) async throws -> Void)? = nil,
        _ body: (DynamicSecurityFixture) async throws -> Void
    ) async throws {
        let directory = temporaryDirectory()
        if let prepare {
            try await prepare(directory)
        } else {
            // What `users init` writes (`DynamicSecurityProfileTests` runs the command itself).
            try await ProfileWriter.make(
                config: directory + "/dynamic-security.json", adminUser: "trellis-admin",
                adminPasswordFile: directory + "/admin.password", topics: TopicPrefixes()
            ).write()
        }
        try await withTestBroker(
            anonymous: false,
            extraConfig: try DynamicSecurityPlugin.configLines(config: directory + "/dynamic-security.json")
        ) { broker in
            try await body(DynamicSecurityFixture(directory: directory, broker: broker))
        }
    }

    /// Waits until `events` reports the connection lost; throws after `timeout`.
    static func waitForDisconnection(_ events: AsyncStream<MQTTConnectionEvent>, timeout: Duration = .seconds(20))
        async throws
    {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events {
                    if case .disconnected = event { return }
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw TimeoutError(message: "the connection was not closed within \(timeout)")
            }
            try await group.next()
            group.cancelAll()
        }
    }
}
