import Foundation
import Testing
import TrellisBroker
import TrellisMQTT
import TrellisTestSupport

/// The shipped broker.dynsec.conf, started by `trellis run` as its own broker: Trellis logs in with
/// the account `trellis users init` made, and an app added while everything runs is answered at once.
@Suite("Secure profile with dynamic security (broker.dynsec.conf)")
struct DynamicSecurityProfileTests {
    @Test(
        "trellis run with broker.dynsec.conf answers an app added while it runs, with no SIGHUP, and refuses a Response Topic at another's replies without a flag"
    )
    func shippedProfile() async throws {
        let shipped = try ShippedProfile.text("broker.dynsec.conf")
        let plugin = try #require(DynamicSecurityPlugin.path)
        let directory = temporaryDirectory()
        let state = directory + "/trellis-state"
        let initialised = try await TrellisBinary.run(["users", "init", "--trellis-account", "trellis"], in: directory)
        #expect(initialised.status == 0, "\(initialised.output)")
        #expect(
            !initialised.output.contains(
                try String(contentsOfFile: state + "/trellis.password", encoding: .utf8)
                    .trimmingCharacters(in: .newlines)), "passwords are not printed")

        let (trellis, ports) = try await TrellisBinary.startListening(
            { ports in
                let config =
                    shipped
                    .replacingOccurrences(of: "listener 1883 127.0.0.1", with: "listener \(ports[0]) 127.0.0.1")
                    .replacingOccurrences(
                        of: "plugin /usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so", with: "plugin \(plugin)"
                    )
                    .replacingOccurrences(of: "trellis-state/", with: state + "/")
                try? config.write(toFile: directory + "/broker.dynsec.conf", atomically: true, encoding: .utf8)
                return [
                    "run", "--broker-config", directory + "/broker.dynsec.conf", "--username", "trellis",
                    "--password-file", state + "/trellis.password", "--state", directory + "/relay"
                ]
            }, ready: { _ in ["connected to the broker"] }, in: directory)
        defer { trellis.process.signal(SIGKILL); trellis.process.waitUntilExit() }

        let added = try await TrellisBinary.run(
            [
                "users", "add", "alice", "--password", "pw-alice",
                "--broker", "127.0.0.1:\(ports[0])"
            ], in: directory)
        #expect(added.status == 0, "\(added.output)")
        #expect(added.output.contains("added alice (client), in effect now"))

        let answers = try await ShippedProfile.alicesAnswers(port: ports[0])
        #expect(answers[0].text?.hasPrefix("ID:7;") == true)

        // No flag given: a Response Topic at another client's replies is refused.
        let bob = try await TrellisBinary.run(
            ["users", "add", "bob", "--password", "pw-bob", "--broker", "127.0.0.1:\(ports[0])"], in: directory)
        #expect(bob.status == 0, "\(bob.output)")
        try await ShippedProfile.foreignResponseTopicRefused(port: ports[0])
        #expect(try await trellis.terminate() == 0)
    }
}
