import Foundation
import Testing
import TrellisMQTT
import TrellisTestSupport
import TrellisApplication
import TrellisCore
import TrellisBroker

/// `trellis users migrate`: the accounts of the file-based profile move into the plugin with
/// their roles and their passwords, which Mosquitto 2 hashes as the plugin does.
@Suite("users migrate")
struct DynamicSecurityMigrationTests {
    @Test("accounts made in the files log in to the plugin with their old passwords and keep their rights")
    func migratesAndLogsIn() async throws {
        var filesListing = ""
        try await DynamicSecurityFixture.with(prepare: { directory in
            // The file-based profile's accounts, as `users add` makes them (in-process); the migration is the binary's.
            let files = FileAccounts(
                passwordFile: directory + "/trellis-state/passwd", aclFile: directory + "/trellis-state/acl")
            for (name, role, sensors) in [
                ("relay", AccessControlList.Role.trellis, [String]()), ("alice", .client, []),
                ("pi1", .sensor, ["0x36"]),
                ("door", .button, [])
            ] {
                try await AccountChanges.add(
                    name, role: role, sensors: sensors, password: "old-\(name)",
                    trellisPasswordFile: role == .trellis ? directory + "/relay.password" : nil, in: files)
            }
            // An account of Mosquitto 1's $6$ form, whose hash cannot move.
            let passwd = directory + "/trellis-state/passwd"
            try (try String(contentsOfFile: passwd, encoding: .utf8) + "legacy:$6$c2FsdA==$aGFzaA==\n")
                .write(toFile: passwd, atomically: true, encoding: .utf8)
            filesListing = try await files.list().map { "\($0.name)\t\($0.role)\n" }.joined()
            let migrated = try await TrellisBinary.run(
                [
                    "users", "migrate", "--config", directory + "/dynamic-security.json",
                    "--admin-password-file", directory + "/admin.password"
                ], in: directory)
            #expect(migrated.status == 0, "\(migrated.output)")
            #expect(migrated.output.contains("migrated pi1 (sensor 0x36)"))
            #expect(migrated.output.contains("warning: legacy has no password the plugin can read"))
            #expect(!migrated.output.contains("old-"), "no password is printed")
            #expect(FileManager.default.fileExists(atPath: passwd), "the files stay for broker.secure.conf")
        }) { fixture in
            for name in ["relay", "alice", "pi1", "door"] {
                #expect(try await fixture.broker.login(name, password: "old-\(name)") == .accepted, "\(name)")
                #expect(try await fixture.broker.login(name, password: "wrong") != .accepted, "\(name)")
            }
            let listed = try await fixture.users(["list"]).output
            #expect(
                listed.split(separator: "\n").sorted()
                    == (filesListing + "legacy\tclient\n").split(separator: "\n").sorted())

            let relay = try await fixture.login("relay", password: "old-relay")
            let inbox = await MessageCollector.collecting(relay)
            try await relay.subscribe("rpi/sensors/#")
            let pi1 = try await fixture.login("pi1", password: "old-pi1")
            try await pi1.publishAndWait(topic: "rpi/sensors/0x36", payload: Array("{}".utf8))
            try await inbox.messages(on: "rpi/sensors/0x36")
            await #expect(throws: MQTTError.self) {
                try await pi1.publishAndWait(topic: "rpi/sensors/0x37", payload: [])
            }
            await pi1.shutdown()
            await relay.shutdown()

            // The account without a password gets one, at once.
            let passwd = try await fixture.users(["passwd", "legacy", "--password", "new"])
            #expect(passwd.status == 0, "\(passwd.output)")
            #expect(try await fixture.broker.login("legacy", password: "new") == .accepted)
        }
    }

    @Test("migrate refuses an existing plugin configuration and a missing password file, with one line each")
    func refusals() async throws {
        let directory = temporaryDirectory()
        /// `users migrate` as its command resolves it: the files of `directory`, the plugin's file `config`.
        func attempt(passwordFile: String, config: String) async -> String {
            do {
                _ = try await AccountChanges.migrate(
                    passwordFile: passwordFile, aclFile: directory + "/trellis-state/acl", config: config,
                    adminUser: "trellis-admin", adminPasswordFile: directory + "/trellis-state/admin.password",
                    topics: TopicPrefixes())
                return "migrated"
            } catch {
                return "\(error)"
            }
        }
        let missing = await attempt(passwordFile: directory + "/nope/passwd", config: directory + "/new.json")
        #expect(missing.contains("cannot read the password file \(directory)/nope/passwd"), "\(missing)")
        try await FileAccounts(
            passwordFile: directory + "/trellis-state/passwd", aclFile: directory + "/trellis-state/acl"
        ).set("alice", role: .client, sensors: [], password: "pw")
        try "{}".write(toFile: directory + "/taken.json", atomically: true, encoding: .utf8)
        let exists = await attempt(passwordFile: directory + "/trellis-state/passwd", config: directory + "/taken.json")
        #expect(exists.contains("taken.json exists"), "\(exists)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/trellis-state/admin.password"))
        #expect(try String(contentsOfFile: directory + "/taken.json", encoding: .utf8) == "{}", "left as it was")
    }
}
