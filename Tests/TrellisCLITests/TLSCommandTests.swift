import Configuration
import Foundation
import Testing
import TrellisApplication
import TrellisMQTT
import TrellisTestSupport

@testable import trellis

/// `trellis run`, `record` and `config check` with broker URLs and TLS, against a real Mosquitto
/// whose TLS listeners use a CA the test makes with `openssl`.
@Suite("trellis over TLS, as a user runs it")
struct TLSCommandTests {
    static func request(_ id: Int, sender: String) -> [UInt8] {
        Array("ID:\(id);sender:\(sender);receiver:Host-RPI3B+;payload:;operation:REQ_numPlants".utf8)
    }

    /// Sends a plant request on the broker's plain listener and waits for Trellis's answer.
    func expectAnswer(broker: TestBroker, sender: String) async throws {
        let (client, inbox) = try await TestClients.connectCollecting(to: broker, "rpi/fromrpi")
        try await client.publishAndWait(topic: "rpi/torpi", payload: Self.request(1, sender: sender), qos: .atLeastOnce)
        try await inbox.wait("the answer to \(sender)") { messages in
            messages.contains {
                ($0.text ?? "").contains("receiver:\(sender)") && ($0.text ?? "").contains("RES_numPlants")
            }
        }
        await client.shutdown()
    }

    @Test("run with an mqtts:// address connects over TLS and answers; SIGHUP with a new CA says a restart is needed")
    func runsOverTLS() async throws {
        try await withTLSTestBroker { broker, pki, listeners in
            let directory = temporaryDirectory()
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let config = directory + "/trellis.yaml"
            func writeConfig(ca: String) throws {
                try """
                broker:
                  address: "mqtts://relay:hunter2@127.0.0.1:\(listeners.verified)"
                  tls:
                    ca: "\(ca)"
                state:
                  dir: "\(directory)/state"
                """.write(toFile: config, atomically: true, encoding: .utf8)
            }
            try writeConfig(ca: pki.caCertificate)
            let trellis = try TrellisBinary.start(["run", "--config", config])
            try await trellis.waitForOutput("connected to the broker")
            #expect(trellis.output.contains("mqtts://127.0.0.1:\(listeners.verified)"))
            #expect(broker.log().contains("u'relay'"))
            try await expectAnswer(broker: broker, sender: "over-tls")

            try writeConfig(ca: pki.caDirectory)
            trellis.process.signal(SIGHUP)
            try await trellis.waitForOutput("apply only after a restart")
            #expect(
                trellis.output.contains("broker.tls.ca: \(pki.caCertificate) → \(pki.caDirectory)"), "\(trellis.output)"
            )
            #expect(try await trellis.terminate() == 0)
            #expect(!trellis.output.contains("hunter2"))
        }
    }

    @Test(
        "--help of run, record and replay lists the URL forms and the TLS flags", arguments: ["run", "record", "replay"]
    )
    func help(command: String) {
        let help =
            switch command {
            case "run": RunCommand.helpMessage()
            case "record": RecordCommand.helpMessage()
            default: ReplayCommand.helpMessage()
            }
        for text in ["mqtts://", "--tls-ca", "--tls-cert", "--tls-key"] {
            #expect(help.contains(text), "\(command) --help lacks \(text)")
        }
    }

    @Test("a client certificate with use_identity_as_username logs Trellis in as its common name")
    func identityAsUsername() async throws {
        // Anonymous clients may only send requests and read answers; `trellis` may do anything.
        let acl = temporaryDirectory() + "/acl"
        try FileManager.default.createDirectory(
            atPath: (acl as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try """
        topic write rpi/torpi
        topic read rpi/fromrpi
        topic read trellis/status

        user trellis
        topic readwrite #

        """.write(toFile: acl, atomically: true, encoding: .utf8)
        try await withTLSTestBroker(extraConfig: ["acl_file \(acl)"]) { broker, pki, listeners in
            let (watcher, status) = try await TestClients.connectCollecting(to: broker, "trellis/status")
            let trellis = try TrellisBinary.start([
                "run", "--broker", "mqtts://localhost:\(listeners.clientCertificate)", "--tls-ca", pki.caCertificate,
                "--tls-cert", pki.clientCertificate, "--tls-key", pki.clientKey, "--state", temporaryDirectory()
            ])
            // Only the user `trellis` may publish trellis/status: seeing `online` proves the login.
            try await status.wait("online") { $0.last?.text == "online" }
            #expect(broker.log().contains("u'trellis'"))
            try await expectAnswer(broker: broker, sender: "by-certificate")
            #expect(try await trellis.terminate() == 0)
            await watcher.shutdown()
        }
    }

    @Test("an untrusted broker certificate is logged with its reason and retried, not fatal")
    func untrustedIsRetried() async throws {
        try await withTLSTestBroker { _, pki, listeners in
            let trellis = try TrellisBinary.start([
                "run", "--broker", "mqtts://trellis:hunter2@127.0.0.1:\(listeners.untrusted)", "--tls-ca",
                pki.caCertificate,
                "--state", temporaryDirectory()
            ])
            try await trellis.waitForOutput("not signed by a trusted CA")
            try await trellis.waitForOutput("retrying in")
            #expect(trellis.process.isRunning)
            _ = try await trellis.terminate()
            #expect(!trellis.output.contains("hunter2"))
        }
    }

    /// The configuration of `trellis run` given `flags`, with no file or variable besides.
    static func load(_ flags: [String: ConfigContent], file: String? = nil) async throws -> EffectiveConfiguration {
        let path = file ?? (temporaryDirectory() + "/trellis.yaml")
        if file == nil { try "log:\n  level: info\n".write(toFile: path, atomically: true, encoding: .utf8) }
        return try await EffectiveConfiguration.load(file: path, environment: [:], flags: flags)
    }

    @Test(
        "a TLS file that cannot be read stops run at once with one line naming it",
        arguments: ["--tls-ca", "--tls-cert", "--tls-key"])
    func missingFile(flag: String) async throws {
        let directory = temporaryDirectory()
        let missing = directory + "/absent.pem"
        let present = directory + "/present.pem"
        try "not checked before the connection\n".write(toFile: present, atomically: true, encoding: .utf8)
        var arguments = ["--broker", "mqtts://127.0.0.1:1", "--state", temporaryDirectory()]
        switch flag {
        case "--tls-ca": arguments += ["--tls-ca", missing]
        case "--tls-cert": arguments += ["--tls-cert", missing, "--tls-key", present]
        default: arguments += ["--tls-cert", present, "--tls-key", missing]
        }
        // What `trellis run` checks before it connects, as it parses and reads its flags.
        let configuration = try await Self.load(try RunCommand.parse(arguments).flagValues)
        let tls = try #require(configuration.tls)
        #expect {
            try tls.validate()
        } throws: { error in
            let message = (error as? MQTTError)?.message ?? ""
            return message.hasPrefix("cannot read the TLS") && message.contains(missing) && !message.contains("\n")
        }
    }

    @Test(
        "bad addresses are refused with what is allowed, and never echo a password",
        arguments: [
            "mqtt:/x", "mqtt://127.0.0.1:70000", "ws://127.0.0.1", "mqtts://trellis:hunter2@:8883"
        ])
    func badAddress(address: String) async throws {
        do {
            _ = try await Self.load(try RunCommand.parse(["--broker", address]).flagValues)
            Issue.record("run took \(address)")
        } catch {
            #expect("\(error)".contains("mqtts://HOST[:PORT]"), "\(error)")
            #expect(!"\(error)".contains("hunter2"))
        }
        let record = try RecordCommand.parse(["--broker", address, "--count", "1"])
        do {
            _ = try await record.login.configuration(for: record.broker, as: "record")
            Issue.record("record took \(address)")
        } catch {
            #expect(error is CommandFailure)
            #expect("\(error)".contains("mqtts://HOST[:PORT]"), "\(error)")
            #expect(!"\(error)".contains("hunter2"))
        }
    }

    @Test("config check masks the password, says TLS keys need a restart, and refuses TLS files without mqtts://")
    func configCheck() async throws {
        let directory = temporaryDirectory()
        /// The configuration of a file `name` in the directory holding `yaml`, and the file's path.
        func check(_ name: String, _ yaml: String) async throws -> (file: String, report: String) {
            let file = directory + "/" + name
            try yaml.write(toFile: file, atomically: true, encoding: .utf8)
            do {
                return (file, try await Self.load([:], file: file).report.joined(separator: "\n"))
            } catch {
                return (file, "refused: \(error)")
            }
        }

        let checked = try await check(
            "tls.yaml",
            """
            broker:
              address: "mqtts://trellis:hunter2@broker.example"
              tls:
                ca: /etc/trellis/ca.crt
                cert: /etc/trellis/trellis.crt
                key: /etc/trellis/trellis.key
            """)
        let good = checked.file
        #expect(!checked.report.hasPrefix("refused"), "\(checked.report)")
        #expect(
            checked.report.contains(
                "broker.address = mqtts://***@broker.example    # from \(good); a change needs a restart"))
        #expect(
            checked.report.contains("broker.tls.ca = /etc/trellis/ca.crt    # from \(good); a change needs a restart"))
        #expect(
            checked.report.contains(
                "broker.tls.key = /etc/trellis/trellis.key    # from \(good); a change needs a restart"))
        #expect(!checked.report.contains("hunter2"))

        let refused = try await check(
            "plain.yaml", "broker:\n  address: \"127.0.0.1:1883\"\n  tls:\n    ca: /etc/trellis/ca.crt\n")
        #expect(refused.report.hasPrefix("refused"), "\(refused.report)")
        #expect(
            refused.report.contains(
                "broker.tls.ca (from \(refused.file)) needs an mqtts:// broker.address, and it is 127.0.0.1:1883"),
            "\(refused.report)")

        let badCheck = try await check("bad.yaml", "broker:\n  address: \"mqtts://trellis:hunter2@broker.example:0\"\n")
        #expect(badCheck.report.hasPrefix("refused"), "\(badCheck.report)")
        #expect(badCheck.report.contains("out of range"), "\(badCheck.report)")
        #expect(!badCheck.report.contains("hunter2"))
    }

    @Test("record reaches a TLS broker with user info in the URL; the password is not echoed")
    func recordOverTLS() async throws {
        try await withTLSTestBroker { broker, pki, listeners in
            let output = temporaryDirectory() + ".jsonl"
            let record = try TrellisBinary.start([
                "record", "--broker", "mqtts://rec:hunter2@[::1]:\(listeners.verifiedIPv6)", "--tls-ca",
                pki.caCertificate,
                "--topic", "tls/record", "--count", "1", "--output", output
            ])
            try await record.waitForOutput("recording")
            let publisher = try await TestClients.connect(to: broker)
            try await publisher.publishAndWait(topic: "tls/record", payload: Array("hello".utf8), qos: .atLeastOnce)
            #expect(try await record.waitForExit() == 0, "\(record.output)")
            #expect(record.output.contains("mqtts://***@[::1]:\(listeners.verifiedIPv6)"))
            #expect(!record.output.contains("hunter2"))
            #expect(try String(contentsOfFile: output, encoding: .utf8).contains("\"payload\":\"hello\""))
            #expect(broker.log().contains("u'rec'"))

            // The capture replayed to the broker over TLS reaches a subscriber on the plain listener.
            let inbox = await MessageCollector.collecting(publisher)
            try await publisher.subscribe("tls/record")
            let replay = try await TrellisBinary.run([
                "replay", output, "--broker", "mqtts://localhost:\(listeners.verified)", "--tls-ca", pki.caCertificate,
                "--no-delay"
            ])
            #expect(replay.status == 0, "\(replay.output)")
            #expect(replay.output.contains("sent 1"), "\(replay.output)")
            try await inbox.wait("the replayed message") {
                $0.contains { $0.topic == "tls/record" && $0.text == "hello" }
            }
            await publisher.shutdown()
        }
    }
}
