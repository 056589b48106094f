import Foundation
import Testing
import TrellisBroker
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisTestSupport

/// A bridge to an upstream Mosquitto that takes only TLS clients with an account, as a cloud
/// broker does: the right account over TLS forwards; a wrong password forwards nothing and the
/// messages wait in the queue.
@Suite("Bridge: TLS and an account upstream", .serialized, .timeLimit(.minutes(2)))
struct BridgeTLSTests {
    /// An upstream broker with a TLS listener of a CA made for the test, refusing clients without
    /// the account `bridge` (password `pw-bridge`), with the access list `acl` when given; `body`
    /// gets its certificates, its TLS port and what the account `reader` receives of `up/#` on it.
    static func withUpstream(
        acl: String? = nil, _ body: (TestCertificates, Int, MessageCollector) async throws -> Void
    ) async throws {
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        let passwd = pki.directory + "/passwd"
        try "bridge:pw-bridge\nreader:pw-reader\n".write(toFile: passwd, atomically: true, encoding: .utf8)
        let hasher = try Process.run(URL(fileURLWithPath: "/usr/bin/mosquitto_passwd"), arguments: ["-U", passwd])
        hasher.waitUntilExit()
        #expect(hasher.terminationStatus == 0)
        var extra = ["password_file \(passwd)"]
        if let acl {
            try acl.write(toFile: pki.directory + "/acl", atomically: true, encoding: .utf8)
            extra.append("acl_file \(pki.directory)/acl")
        }
        guard let port = PortProbe.freeLoopbackPort() else { throw TimeoutError(message: "no free loopback port") }
        try await withTestBroker(anonymous: false, extraConfig: extra + pki.listener(port: port)) { upstream in
            let reader = try await TestClients.connect(to: upstream) {
                ($0.username, $0.password) = ("reader", "pw-reader")
            }
            try await body(pki, port, try await MessageCollector.collecting(reader, subscribedTo: ["up/#"]))
            await reader.shutdown()
        }
    }

    static func settings(port: Int, pki: TestCertificates, password: String) throws -> RelaySettings {
        let file = pki.directory + "/bridge-password-\(UUID().uuidString.prefix(6))"
        try "\(password)\n".write(toFile: file, atomically: true, encoding: .utf8)
        var bridge = BridgeSettings(
            name: "cloud", host: "127.0.0.1", port: port,
            rules: [BridgeRule(direction: .out, filter: "sensors/#", prefix: "up/")])
        bridge.tls = BridgeTLS(ca: pki.caCertificate)
        (bridge.username, bridge.passwordFile) = ("bridge", file)
        var settings = RelaySettings()
        settings.bridges = [bridge]
        return settings
    }

    @Test("over TLS with its account the bridge forwards; with a wrong password the messages wait in the queue")
    func account() async throws {
        try await Self.withUpstream { pki, port, inbox in
            try await withRelay(settings: try Self.settings(port: port, pki: pki, password: "pw-bridge")) { relay in
                let device = try await relay.connect()
                try await device.publishAndWait(topic: "sensors/kitchen", payload: Array("21.5".utf8))
                #expect(try await inbox.messages(on: "up/sensors/kitchen")[0].text == "21.5")
            }
            try await withRelay(settings: try Self.settings(port: port, pki: pki, password: "wrong")) { relay in
                let device = try await relay.connect()
                for index in 0..<3 {
                    try await device.publishAndWait(topic: "sensors/hall", payload: Array("\(index)".utf8))
                }
                try await eventually("the three kept in the queue") {
                    try await relay.store.forwardBacklog(bridge: "cloud").messages == 3
                }
                #expect(await inbox.received(on: "up/sensors/hall").isEmpty)
            }
        }
    }

    @Test("a message the upstream broker refuses (not authorized) leaves the queue, counted, and the rest go on")
    func refused() async throws {
        let acl = "user bridge\ntopic write up/sensors/open/#\n\nuser reader\ntopic read up/#\n"
        try await Self.withUpstream(acl: acl) { pki, port, inbox in
            try await withRelay(settings: try Self.settings(port: port, pki: pki, password: "pw-bridge")) { relay in
                let device = try await relay.connect()
                try await device.publishAndWait(topic: "sensors/secret/1", payload: Array("no".utf8))
                try await device.publishAndWait(topic: "sensors/open/2", payload: Array("yes".utf8))
                #expect(try await inbox.messages(on: "up/sensors/open/2")[0].text == "yes")
                try await eventually("the queue empty, the refused message dropped") {
                    try await relay.store.forwardBacklog(bridge: "cloud").messages == 0
                }
                #expect(await inbox.received(on: "up/sensors/secret/1").isEmpty)
            }
        }
    }
}
