import Foundation
import Logging
import Testing
import TrellisBroker
import TrellisRelay
import TrellisServer
import TrellisTestSupport
@testable import TrellisApplication

/// The console's check of the operator's account against the broker's password file: PBKDF2-SHA512
/// as RFC 8018 defines it, the `$7$` lines Trellis writes, and those Mosquitto's own `mosquitto_passwd` writes.
@Suite("Console: the operator's login")
struct ConsoleOperatorLoginTests {
    @Test("PBKDF2-HMAC-SHA512 gives the known answer (Python's hashlib, 2 iterations)")
    func knownAnswer() {
        let derived = PasswordHash.pbkdf2(
            password: Array("password".utf8), salt: Array("salt".utf8), iterations: 2, length: 64)
        #expect(
            derived.map { String(format: "%02x", $0) }.joined()
                == "e1d9c16aa681708a45f5c7c4e215ceb66e011a2e9f0040713f18aefdb866d53cf76cab2868a39b9f7840edce4fef5a82be67335c77a6068e04112754f27ccf4e"
        )
    }

    @Test("a hash written by Mosquitto's own mosquitto_passwd -U is read: its password matches, another does not")
    func mosquittoPasswdHash() async throws {
        let tool = try #require(
            ["/usr/bin/mosquitto_passwd", "/usr/local/bin/mosquitto_passwd"].first {
                FileManager.default.isExecutableFile(atPath: $0)
            }, "mosquitto_passwd is not installed")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("passwd-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "operator:pä55-wörd\n".write(toFile: path, atomically: true, encoding: .utf8)
        let hasher = try ChildProcess(path: tool, arguments: ["-U", path], outputPath: path + ".out")
        hasher.waitUntilExit()
        #expect(hasher.terminationStatus == 0)
        let hash = try #require(
            MosquittoPasswordEntry.parse(try String(contentsOfFile: path, encoding: .utf8)).first?.pbkdf2)
        #expect(PasswordHash.matches("pä55-wörd", hash))
        #expect(!PasswordHash.matches("pä55-wörd ", hash))
        #expect(OperatorLogin(passwordFile: path).verify("operator", "pä55-wörd"))
        // Trellis's own hash has the form mosquitto_passwd gives: the same iterations, salt and hash lengths.
        let own = PasswordHash.make("pä55-wörd")
        #expect(own.iterations == hash.iterations)
        #expect(own.salt.count == hash.salt.count && own.hash.count == hash.hash.count)
        #expect(own.salt != PasswordHash.make("pä55-wörd").salt, "each hash has its own salt")
    }

    @Test("the operator's password, hashed by Trellis, is accepted; another password or user is not")
    func mosquittoHash() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "console-login-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("passwd").path
        let file = PasswordFile(path: path)
        try file.set("trellis", password: "relay-password")
        try file.set("operator", password: "pä55 wörd with spaces")
        let login = OperatorLogin(passwordFile: path)
        #expect(login.verify("operator", "pä55 wörd with spaces"))
        try file.set("colon", password: "pa:ss ")
        var colon = OperatorLogin(passwordFile: path)
        colon.account = "colon"
        #expect(colon.verify("colon", "pa:ss ") && !colon.verify("colon", "pa") && !colon.verify("colon", "pa:ss"))
        #expect(!login.verify("operator", "pä55 wörd with space"))
        #expect(!login.verify("operator", ""))
        #expect(!login.verify("trellis", "relay-password"))
        #expect(await login.consoleLogin.verify("operator", "pä55 wörd with spaces"))
        // A new password applies at once.
        try file.set("operator", password: "next")
        #expect(login.verify("operator", "next") && !login.verify("operator", "pä55 wörd with spaces"))
        #expect(!OperatorLogin(passwordFile: path + ".missing").verify("operator", "next"))
    }

    @Test("an application with the console beyond loopback and no operator's account is not made; on loopback it is")
    func refusedBeyondLoopback() async throws {
        try await withStore(.inMemory) { store in
            let settings = RelaySettings()
            let mqtt = TrellisApplication.mqtt(
                host: "127.0.0.1", port: 1, clientID: "console-test", settings: settings, maxUnhandled: 8)
            let logger = Logger(label: "trellis.test.console")
            #expect(throws: ConsoleServer.AccessError.self) {
                try TrellisApplication(
                    store: store, mqtt: mqtt, settings: settings,
                    servers: ServerSettings(console: ListenAddress("0.0.0.0:9470")), logger: logger)
            }
            let open = try TrellisApplication(
                store: store, mqtt: mqtt, settings: settings,
                servers: ServerSettings(console: ListenAddress("127.0.0.1:9470")), logger: logger)
            #expect(open.announcements.map(\.message) == ["serving the console"])
            let login = ConsoleLogin { _, _ in false }
            let guarded = try TrellisApplication(
                store: store, mqtt: mqtt, settings: settings,
                servers: ServerSettings(console: ListenAddress("0.0.0.0:9470"), consoleLogin: login), logger: logger)
            #expect(guarded.announcements.count == 1)
            await open.relay.client.shutdown()
            await guarded.relay.client.shutdown()
        }
    }
}
