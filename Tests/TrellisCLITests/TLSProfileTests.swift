import Foundation
import Testing
import TrellisBroker
import TrellisMQTT
import TrellisTestSupport

/// The shipped broker.tls.conf, run by Mosquitto with the test's certificates and free ports:
/// Trellis on "another machine" logs in by its certificate alone (CN=trellis) over TLS, and a
/// password user on the loopback listener gets its answers.
@Suite("Secure profile over TLS (broker.tls.conf)")
struct TLSProfileTests {
    @Test("Trellis with only a client certificate serves a password user through the shipped TLS profile")
    func shippedProfile() async throws {
        let shipped = try ShippedProfile.text("broker.tls.conf")
        let pki = try await TestCertificates.make()
        defer { pki.remove() }
        let directory = temporaryDirectory()
        let state = directory + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        for (name, flag) in [("trellis", ["--trellis"]), ("alice", [])] {
            let added = try await TrellisBinary.run(
                [
                    "users", "add", name, "--password", "pw-\(name)",
                    "--password-file", state + "/passwd", "--acl-file", state + "/acl",
                    "--trellis-password-file", state + "/trellis.password"
                ] + flag)
            #expect(added.status == 0, "\(added.output)")
        }
        let plain = try #require(PortProbe.freeLoopbackPort())
        var tls = try #require(PortProbe.freeLoopbackPort())
        while tls == plain { tls = try #require(PortProbe.freeLoopbackPort()) }
        let config =
            shipped
            .replacingOccurrences(of: "listener 1883 127.0.0.1", with: "listener \(plain) 127.0.0.1")
            .replacingOccurrences(of: "listener 8883\n", with: "listener \(tls) 127.0.0.1\n")
            .replacingOccurrences(of: "trellis-state/", with: state + "/")
            .replacingOccurrences(of: "tls/", with: pki.directory + "/")
        #expect(config.contains("use_identity_as_username true"))
        let configPath = directory + "/broker.tls.conf"
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        ProcessCensus.started("mosquitto")
        let broker = try MosquittoProcess(configPath: configPath, logPath: directory + "/mosquitto.log")
        try await broker.start()
        defer { broker.kill() }
        let deadline = ContinuousClock.now + .seconds(10)
        while !PortProbe.isAccepting(host: "127.0.0.1", port: tls) {
            guard ContinuousClock.now < deadline else { throw TimeoutError(message: "the TLS listener did not open") }
            try await Task.sleep(for: .milliseconds(20))
        }

        let trellis = try TrellisBinary.start([
            "run", "--broker", "mqtts://localhost:\(tls)", "--tls-ca", pki.caCertificate,
            "--tls-cert", pki.clientCertificate, "--tls-key", pki.clientKey, "--secure", "--state",
            directory + "/trellis"
        ])
        try await trellis.waitForOutput("connected to the broker")

        let answer = try await ShippedProfile.alicesAnswers(port: plain)
        #expect(answer[0].text?.hasPrefix("ID:7;") == true)
        let log = (try? String(contentsOfFile: directory + "/mosquitto.log", encoding: .utf8)) ?? ""
        #expect(log.contains("u'trellis'"), "\(log)")

        // Without a certificate the TLS listener turns Trellis away, and says why.
        let refused = try TrellisBinary.start([
            "run", "--broker", "mqtts://localhost:\(tls)", "--tls-ca", pki.caCertificate, "--state",
            directory + "/second"
        ])
        try await refused.waitForOutput("requires a client certificate")
        _ = try await refused.terminate()

        #expect(try await trellis.terminate() == 0)
        await broker.stop()
    }
}
