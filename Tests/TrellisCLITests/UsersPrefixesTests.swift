import Foundation
import Testing
import TrellisApplication
import TrellisBroker
import TrellisCore
@testable import trellis

/// `trellis users add` and `remove` write the ACL with the topic prefixes `trellis run` reads (the
/// configuration file, `TRELLIS_…` variables, flags), so the rights match the running relay. The
/// prefixes are resolved by `AccountChanges.prefixes`, which the commands call, and the files written
/// by the stores the commands use, here in-process.
@Suite("users: the ACL follows the configured topic prefixes")
struct UsersPrefixesTests {
    /// The ACL of `accounts` as the table writes it with these prefixes.
    static func expected(_ accounts: [(String, AccessControlList.Role)], plant: String, buttons: String) -> String {
        var acl = AccessControlList()
        for (name, role) in accounts { acl.set(name, role: role) }
        return acl.render(topics: TopicPrefixes(plant: plant, buttons: buttons))
    }

    /// The files backend of `directory`, its ACL written with `topics`.
    static func store(_ directory: String, _ topics: TopicPrefixes) -> FileAccounts {
        FileAccounts(
            passwordFile: directory + "/trellis-state/passwd", aclFile: directory + "/trellis-state/acl", topics: topics
        )
    }

    static func acl(in directory: String) throws -> String {
        try String(contentsOfFile: directory + "/trellis-state/acl", encoding: .utf8)
    }

    @Test("the file's prefixes, a TRELLIS_ variable over the file, a flag over both; sync writes the ACL anew once")
    func followsSettings() async throws {
        let directory = temporaryDirectory()
        let file = directory + "/trellis.yaml"
        try "plant:\n  prefix: home/plants\nbuttons:\n  prefix: home/p2o\n"
            .write(toFile: file, atomically: true, encoding: .utf8)

        let fromFile = try await AccountChanges.prefixes(file: file, environment: [:])
        try await Self.store(directory, fromFile).set("alice", role: .client, sensors: [], password: "pw")
        let written = try Self.acl(in: directory)
        #expect(written == Self.expected([("alice", .client)], plant: "home/plants", buttons: "home/p2o"))
        #expect(written.contains("home/plants/torpi") && !written.contains(" rpi/"), "\(written)")

        let environment = ["TRELLIS_PLANT_PREFIX": "env/plants"]
        let fromEnvironment = try await AccountChanges.prefixes(file: file, environment: environment)
        try await Self.store(directory, fromEnvironment).set("door", role: .button, sensors: [], password: "pw")
        #expect(
            try Self.acl(in: directory)
                == Self.expected([("alice", .client), ("door", .button)], plant: "env/plants", buttons: "home/p2o"))

        let fromFlags = try await AccountChanges.prefixes(
            file: file, plantPrefix: "flag/plants", buttonPrefix: "flag/p2o", environment: environment)
        try await Self.store(directory, fromFlags).remove("door")
        #expect(
            try Self.acl(in: directory)
                == Self.expected([("alice", .client)], plant: "flag/plants", buttons: "flag/p2o"))

        // Another file, read instead of trellis.yaml: sync writes the ACL anew, then finds nothing to do.
        try "plant:\n  prefix: other\n".write(toFile: directory + "/other.yaml", atomically: true, encoding: .utf8)
        let other = Self.store(
            directory, try await AccountChanges.prefixes(file: directory + "/other.yaml", environment: [:]))
        let synced = try await other.sync()
        #expect(synced.changes.count == 1 && synced.changes[0].contains("trellis-state/acl anew"), "\(synced.changes)")
        #expect(try Self.acl(in: directory) == Self.expected([("alice", .client)], plant: "other", buttons: "p2o"))
        #expect(try await other.sync().changes.isEmpty, "a second sync changes nothing")
    }

    @Test("users init and users migrate write the plugin's roles with the configured prefixes, not the defaults")
    func profileFollowsSettings() async throws {
        let settings = "plant:\n  prefix: home/plants\nbuttons:\n  prefix: home/p2o\n"
        /// The plugin's configuration `file`, checked to hold only the configured prefixes.
        func checked(_ file: String, _ must: [String]) throws {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            for topic in must { #expect(text.contains(topic), "\(topic) in \(file)") }
            #expect(!text.contains("\"rpi/") && !text.contains("\"p2o/"), "a default prefix in \(file)")
        }

        let fresh = temporaryDirectory()
        try settings.write(toFile: fresh + "/trellis.yaml", atomically: true, encoding: .utf8)
        let configured = try await AccountChanges.prefixes(file: fresh + "/trellis.yaml", environment: [:])
        try await ProfileWriter.make(
            config: fresh + "/dynamic-security.json", adminUser: "trellis-admin",
            adminPasswordFile: fresh + "/admin.password", topics: configured
        ).write()
        try checked(fresh + "/dynamic-security.json", ["home/plants/torpi", "home/p2o/buttons/+/press"])
        // Another configuration, and a prefix flag over it.
        try "plant:\n  prefix: other/plants\n".write(toFile: fresh + "/other.yaml", atomically: true, encoding: .utf8)
        let flagged = try await AccountChanges.prefixes(
            file: fresh + "/other.yaml", buttonPrefix: "flag/p2o", environment: [:])
        try await ProfileWriter.make(
            config: fresh + "/second.json", adminUser: "trellis-admin", adminPasswordFile: fresh + "/second.password",
            topics: flagged
        ).write()
        try checked(fresh + "/second.json", ["other/plants/torpi", "flag/p2o/buttons/+/press"])

        let old = temporaryDirectory()
        let files = Self.store(old, configured)
        try await files.set("pi1", role: .sensor, sensors: ["0x36"], password: "pw")
        let migrated = try await AccountChanges.migrate(
            passwordFile: files.passwordFile, aclFile: files.aclFile, config: old + "/dynamic-security.json",
            adminUser: "trellis-admin", adminPasswordFile: old + "/admin.password", topics: configured)
        #expect(migrated == [.init(name: "pi1", role: .sensor, sensors: ["0x36"], hasPassword: true)])
        try checked(old + "/dynamic-security.json", ["home/plants/sensors/0x36", "home/plants/torpi"])
    }

    @Test("a configuration that does not read is one clear line naming the key, and no account is made")
    func unreadableConfiguration() async throws {
        let directory = temporaryDirectory()
        try "plant:\n  prefix: a/#\n".write(toFile: directory + "/trellis.yaml", atomically: true, encoding: .utf8)
        let error = await #expect(throws: CommandFailure.self) {
            try await AccountChanges.prefixes(file: directory + "/trellis.yaml", environment: [:])
        }
        let message = error?.description ?? ""
        #expect(message.contains("the configuration does not read") && message.contains("plant.prefix"), "\(message)")
        // `users add` reads it before anything is written: the command, run here, makes no account.
        var add = try UsersCommand.Add.parse([
            "alice", "--password", "pw", "--backend", "files", "--config", directory + "/trellis.yaml",
            "--password-file", directory + "/trellis-state/passwd", "--acl-file", directory + "/trellis-state/acl"
        ])
        await #expect(throws: CommandFailure.self) { try await add.run() }
        #expect(!FileManager.default.fileExists(atPath: directory + "/trellis-state/passwd"))
    }
}
