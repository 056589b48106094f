import Foundation
import Testing
import TrellisMQTT
import TrellisTestSupport
import TrellisApplication
import TrellisCore
@testable import trellis

/// `trellis users` with the dynamic security backend, against a real Mosquitto running the real
/// plugin: every change is in effect as soon as the command returns, and the broker is never
/// restarted nor signalled.
@Suite("Accounts in the dynamic security plugin")
struct DynamicSecurityAccountsTests {
    @Test("a sensor account added now publishes at once; removed, it is disconnected and refused")
    func sensorLifecycle() async throws {
        try await DynamicSecurityFixture.with { fixture in
            try await fixture.add("relay", password: "pw-relay", ["--trellis"])
            let relay = try await fixture.login("relay", password: "pw-relay")
            let inbox = await MessageCollector.collecting(relay)
            try await relay.subscribe("rpi/sensors/#")
            #expect(try await fixture.broker.login("pi1", password: "pw-pi1") != .accepted)

            try await fixture.add("pi1", password: "pw-pi1", ["--sensor", "0x36"])
            let pi1 = try await fixture.login("pi1", password: "pw-pi1")
            let events = pi1.events
            try await pi1.publishAndWait(
                topic: "rpi/sensors/0x36", payload: Array(#"{"moisture":5,"temperature":70}"#.utf8))
            let readings = try await inbox.messages(on: "rpi/sensors/0x36")
            #expect(readings.count == 1)
            await #expect(throws: MQTTError.self, "another sensor's topic is refused") {
                try await pi1.publishAndWait(topic: "rpi/sensors/0x40", payload: Array("{}".utf8))
            }

            let removed = try await fixture.users(["remove", "pi1"])
            #expect(removed.status == 0, "\(removed.output)")
            #expect(removed.output.contains("removed pi1, in effect now"))
            try await DynamicSecurityFixture.waitForDisconnection(events)
            await pi1.shutdown()
            guard case let .refused(reason) = try await fixture.broker.login("pi1", password: "pw-pi1") else {
                Issue.record("a removed account logged in")
                return
            }
            #expect(reason.lowercased().contains("not authori"), "\(reason)")
            #expect(!fixture.broker.log().contains("Reloading"), "the broker was never told to reload")
            await relay.shutdown()
        }
    }

    @Test("passwd: the new password is needed from the next login on, the old one refused")
    func passwd() async throws {
        try await DynamicSecurityFixture.with { fixture in
            try await fixture.add("alice", password: "first")
            #expect(try await fixture.broker.login("alice", password: "first") == .accepted)
            let changed = try await fixture.users(["passwd", "alice", "--password", "second"])
            #expect(changed.status == 0, "\(changed.output)")
            #expect(!changed.output.contains("second"), "a given password is not printed")
            #expect(try await fixture.broker.login("alice", password: "first") != .accepted)
            #expect(try await fixture.broker.login("alice", password: "second") == .accepted)
            let missing = try await fixture.users(["passwd", "nobody", "--password", "x"])
            #expect(missing.status != 0)
            #expect(missing.output.contains("there is no account nobody"))
        }
    }

    @Test("passwd of Trellis's account writes its password file too, mode 0600; another account's is not written")
    func passwdOfTrellis() async throws {
        // What `users passwd` decides (`AccountChanges.setPassword`), whatever the backend: here the files'.
        let directory = temporaryDirectory()
        let store = FileAccounts(passwordFile: directory + "/passwd", aclFile: directory + "/acl")
        try await store.set("relay", role: .trellis, sensors: [], password: "first")
        try await store.set("alice", role: .client, sensors: [], password: "first")
        let before = try String(contentsOfFile: directory + "/passwd", encoding: .utf8)
        let path = directory + "/relay.password"
        let passwd = try UsersCommand.Passwd.parse(["relay", "--trellis-password-file", path])
        let (secret, generated) = try passwd.passwordInput.resolve()
        #expect(generated, "a random password, printed")
        try await AccountChanges.setPassword("relay", password: secret, trellisPasswordFile: path, in: store)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == secret + "\n")
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        #expect(try String(contentsOfFile: directory + "/passwd", encoding: .utf8) != before, "the hash changed")
        try await AccountChanges.setPassword(
            "alice", password: "second", trellisPasswordFile: directory + "/alice.password", in: store)
        #expect(!FileManager.default.fileExists(atPath: directory + "/alice.password"))
    }

    @Test(
        "list shows each account's role as the files backend does; a role change replaces the old rights; the administrator only administers"
    )
    func listAndChange() async throws {
        try await DynamicSecurityFixture.with { fixture in
            try await fixture.add("alice", password: "pw")
            try await fixture.add("door", password: "pw", ["--button"])
            try await fixture.add("pi1", password: "pw", ["--sensor", "0x36", "0X37"])
            let listed = try await fixture.users(["list"])
            #expect(listed.status == 0, "\(listed.output)")
            #expect(listed.output == "alice\tclient\ndoor\tbutton\npi1\tsensor 0x36 0x37\n")

            try await fixture.add("pi1", password: "pw2", ["--sensor", "0x40"])
            let relisted = try await fixture.users(["list"])
            #expect(relisted.output.contains("pi1\tsensor 0x40\n"), "\(relisted.output)")
            // Nothing is left of the role replaced: the plugin keeps a deleted role in the lists of
            // the clients holding it (eclipse-mosquitto/mosquitto#2660), so pi1 lets go of it first.
            #expect(try fixture.savedRoles(of: "pi1") == ["sensor", "user/pi1"])
            let pi1 = try await fixture.login("pi1", password: "pw2")
            try await pi1.publishAndWait(topic: "rpi/sensors/0x40", payload: [])
            await #expect(throws: MQTTError.self) {
                try await pi1.publishAndWait(topic: "rpi/sensors/0x36", payload: [])
            }
            await pi1.shutdown()

            #expect(try await fixture.users(["remove", "nobody"]).output.contains("there is no account nobody"))
            let admin = try await fixture.users(["remove", "trellis-admin"])
            #expect(admin.status != 0)
            #expect(admin.output.contains("trellis-admin is the dynamic security plugin's administration account"))

            // The administration account `users init` made administers and nothing else.
            let password = try String(contentsOfFile: fixture.adminPasswordFile, encoding: .utf8)
                .trimmingCharacters(in: .newlines)
            let administrator = try await fixture.login("trellis-admin", password: password)
            await #expect(throws: MQTTError.self) { try await administrator.subscribe("#") }
            await #expect(throws: MQTTError.self) {
                try await administrator.publishAndWait(topic: "rpi/torpi/x", payload: [])
            }
            await administrator.shutdown()
        }
    }

    @Test("init writes the configuration and the administration password, both mode 0600, and refuses to overwrite")
    func initFiles() async throws {
        // What `users init` writes (`ProfileWriter`), in-process; `listAndChange` logs in as its administrator.
        let directory = temporaryDirectory()
        let config = directory + "/dynamic-security.json", passwordFile = directory + "/admin.password"
        try await ProfileWriter.make(
            config: config, adminUser: "trellis-admin", adminPasswordFile: passwordFile, topics: TopicPrefixes()
        ).write()
        for path in [config, passwordFile] {
            #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        }
        let password = try String(contentsOfFile: passwordFile, encoding: .utf8).trimmingCharacters(in: .newlines)
        #expect(password.count == 20)
        #expect(try !String(contentsOfFile: config, encoding: .utf8).contains(password), "only its hash is kept")
        let again = await #expect(throws: CommandFailure.self) {
            try await ProfileWriter.make(
                config: config, adminUser: "trellis-admin", adminPasswordFile: directory + "/other",
                topics: TopicPrefixes())
        }
        #expect(again?.description.contains("\(config) exists") == true)
        #expect(!FileManager.default.fileExists(atPath: directory + "/other"))
    }
}
