import Foundation
import Testing
import TrellisMQTT
import TrellisTestSupport

/// `trellis users migrate`: the accounts of the file-based profile move into the plugin with
/// their roles and their passwords, which Mosquitto 2 hashes as the plugin does.
@Suite("users migrate")
struct DynamicSecurityMigrationTests {
    @Test("accounts made in the files log in to the plugin with their old passwords and keep their rights")
    func migrate() async throws {
        var filesListing = ""
        try await DynamicSecurityFixture.with(prepare: { directory in
            for (name, flags) in [
                ("relay", ["--trellis"]), ("alice", []), ("pi1", ["--sensor", "0x36"]), ("door", ["--button"])
            ] {
                let added = try await TrellisBinary.run(
                    [
                        "users", "add", name, "--password", "old-\(name)",
                        "--trellis-password-file", directory + "/relay.password"
                    ] + flags, in: directory)
                #expect(added.status == 0, "\(added.output)")
            }
            // An account of Mosquitto 1's $6$ form, whose hash cannot move.
            let passwd = directory + "/trellis-state/passwd"
            try (try String(contentsOfFile: passwd, encoding: .utf8) + "legacy:$6$c2FsdA==$aGFzaA==\n")
                .write(toFile: passwd, atomically: true, encoding: .utf8)
            filesListing = try await TrellisBinary.run(["users", "list"], in: directory).output
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
        let missing = try await TrellisBinary.run(["users", "migrate", "--password-file", "nope/passwd"], in: directory)
        #expect(missing.status != 0)
        #expect(missing.output.contains("cannot read the password file nope/passwd"))
        #expect(try await TrellisBinary.run(["users", "add", "alice", "--password", "pw"], in: directory).status == 0)
        try "{}".write(toFile: directory + "/taken.json", atomically: true, encoding: .utf8)
        let exists = try await TrellisBinary.run(["users", "migrate", "--config", "taken.json"], in: directory)
        #expect(exists.status != 0)
        #expect(exists.output.contains("taken.json exists"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/trellis-state/admin.password"))
    }
}
