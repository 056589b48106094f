import Foundation
import Testing
import TrellisBroker
import TrellisCore

/// `trellis users add` and `remove` write the ACL with the topic prefixes `trellis run` reads (the
/// configuration file, `TRELLIS_…` variables, flags), so the rights match the running relay.
@Suite("users: the ACL follows the configured topic prefixes")
struct UsersPrefixesTests {
    /// The ACL `trellis users` left in `directory`.
    static func acl(in directory: String) throws -> String {
        try String(contentsOfFile: directory + "/trellis-state/acl", encoding: .utf8)
    }

    /// The ACL of `accounts` as the table writes it with these prefixes.
    static func expected(_ accounts: [(String, AccessControlList.Role)], plant: String, buttons: String) -> String {
        var acl = AccessControlList()
        for (name, role) in accounts { acl.set(name, role: role) }
        return acl.render(topics: TopicPrefixes(plant: plant, buttons: buttons))
    }

    @Test("the file's prefixes, a TRELLIS_ variable over the file, a flag over both")
    func followsSettings() async throws {
        let directory = temporaryDirectory()
        try "plant:\n  prefix: home/plants\nbuttons:\n  prefix: home/p2o\n"
            .write(toFile: directory + "/trellis.yaml", atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment = environment.filter { !$0.key.hasPrefix("TRELLIS_") }

        let added = try await TrellisBinary.run(
            ["users", "add", "alice", "--password", "pw"], in: directory, environment: environment)
        #expect(added.status == 0, "\(added.output)")
        let written = try Self.acl(in: directory)
        #expect(written == Self.expected([("alice", .client)], plant: "home/plants", buttons: "home/p2o"))
        #expect(written.contains("home/plants/torpi") && !written.contains(" rpi/"), "\(written)")

        environment["TRELLIS_PLANT_PREFIX"] = "env/plants"
        let button = try await TrellisBinary.run(
            ["users", "add", "door", "--button", "--password", "pw"],
            in: directory, environment: environment)
        #expect(button.status == 0, "\(button.output)")
        #expect(
            try Self.acl(in: directory)
                == Self.expected(
                    [("alice", .client), ("door", .button)],
                    plant: "env/plants", buttons: "home/p2o"))

        let removed = try await TrellisBinary.run(
            ["users", "remove", "door", "--plant-prefix", "flag/plants", "--button-prefix", "flag/p2o"],
            in: directory, environment: environment)
        #expect(removed.status == 0, "\(removed.output)")
        #expect(
            try Self.acl(in: directory)
                == Self.expected([("alice", .client)], plant: "flag/plants", buttons: "flag/p2o"))

        // `--config` names another file, read instead of trellis.yaml.
        try "plant:\n  prefix: other\n".write(toFile: directory + "/other.yaml", atomically: true, encoding: .utf8)
        let synced = try await TrellisBinary.run(
            ["users", "sync", "--config", "other.yaml"], in: directory,
            environment: environment.filter { $0.key != "TRELLIS_PLANT_PREFIX" })
        #expect(synced.status == 0, "\(synced.output)")
        #expect(synced.output.contains("wrote trellis-state/acl anew"), "\(synced.output)")
        #expect(try Self.acl(in: directory) == Self.expected([("alice", .client)], plant: "other", buttons: "p2o"))
        let again = try await TrellisBinary.run(
            ["users", "sync", "--config", "other.yaml"], in: directory,
            environment: environment.filter { $0.key != "TRELLIS_PLANT_PREFIX" })
        #expect(again.output.contains("already match"), "\(again.output)")
    }

    @Test("users init and users migrate write the plugin's roles with the configured prefixes, not the defaults")
    func profileFollowsSettings() async throws {
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TRELLIS_") }
        let settings = "plant:\n  prefix: home/plants\nbuttons:\n  prefix: home/p2o\n"
        /// The plugin's configuration in `directory`, checked to hold only the configured prefixes.
        func checked(_ file: String, _ must: [String]) throws {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            for topic in must { #expect(text.contains(topic), "\(topic) in \(file)") }
            #expect(!text.contains("\"rpi/") && !text.contains("\"p2o/"), "a default prefix in \(file)")
        }

        let fresh = temporaryDirectory()
        try settings.write(toFile: fresh + "/trellis.yaml", atomically: true, encoding: .utf8)
        let initialised = try await TrellisBinary.run(["users", "init"], in: fresh, environment: environment)
        #expect(initialised.status == 0, "\(initialised.output)")
        try checked(fresh + "/trellis-state/dynamic-security.json", ["home/plants/torpi", "home/p2o/buttons/+/press"])
        // --trellis-config names another configuration; a prefix flag goes over it.
        try "plant:\n  prefix: other/plants\n".write(toFile: fresh + "/other.yaml", atomically: true, encoding: .utf8)
        let flagged = try await TrellisBinary.run(
            [
                "users", "init", "--config", "second.json", "--admin-password-file", "second.password",
                "--trellis-config", "other.yaml", "--button-prefix", "flag/p2o"
            ], in: fresh, environment: environment)
        #expect(flagged.status == 0, "\(flagged.output)")
        try checked(fresh + "/second.json", ["other/plants/torpi", "flag/p2o/buttons/+/press"])

        let old = temporaryDirectory()
        try settings.write(toFile: old + "/trellis.yaml", atomically: true, encoding: .utf8)
        let sensor = try await TrellisBinary.run(
            ["users", "add", "pi1", "--password", "pw", "--sensor", "0x36"], in: old, environment: environment)
        #expect(sensor.status == 0, "\(sensor.output)")
        let migrated = try await TrellisBinary.run(["users", "migrate"], in: old, environment: environment)
        #expect(migrated.status == 0, "\(migrated.output)")
        try checked(old + "/trellis-state/dynamic-security.json", ["home/plants/sensors/0x36", "home/plants/torpi"])
    }

    @Test("a configuration that does not read is one clear line, and no account is made")
    func unreadableConfiguration() async throws {
        let directory = temporaryDirectory()
        try "plant:\n  prefix: a/#\n".write(toFile: directory + "/trellis.yaml", atomically: true, encoding: .utf8)
        let result = try await TrellisBinary.run(
            ["users", "add", "alice", "--password", "pw"], in: directory,
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TRELLIS_") })
        #expect(result.status != 0)
        #expect(
            result.output.contains("the configuration does not read") && result.output.contains("plant.prefix"),
            "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/trellis-state/passwd"))
    }
}
