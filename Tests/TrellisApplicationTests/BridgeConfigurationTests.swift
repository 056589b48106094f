import Configuration
import Foundation
import Testing
import TrellisApplication
import TrellisCore

/// The `bridges:` section of the configuration file: the issue's example read as written, and each
/// bad member refused with its place named (`bridges.cloud.out[0].qos`), the flat settings beside it
/// unaffected.
@Suite("Bridge configuration")
struct BridgeConfigurationTests {
    static let example = """
        spam:
          limit: 20
        bridges:
          cloud:
            url: mqtt://127.0.0.1:18830
            out:
              - topic: "sensors/#"
                prefix: "site/home1/"     # sensors/x is published upstream as site/home1/sensors/x
                qos: 1
            in:
              - topic: "site/home1/commands/#"
                prefix: "site/home1/"     # removed: arrives locally as commands/...
                qos: 1

        """

    @Test("the example reads as written: one bridge, an out and an in rule, and the flat settings beside it")
    func example() async throws {
        let file = try EffectiveConfigurationTests.file(Self.example)
        let configuration = try await EffectiveConfiguration.load(file: file, environment: [:])
        #expect(configuration.int("spam.limit") == 20)
        #expect(
            configuration.bridges == [
                BridgeSettings(
                    name: "cloud", host: "127.0.0.1", port: 18830,
                    rules: [
                        BridgeRule(direction: .out, filter: "sensors/#", prefix: "site/home1/", qos: 1),
                        BridgeRule(direction: .in, filter: "site/home1/commands/#", prefix: "site/home1/", qos: 1)
                    ])
            ])
        let rules = configuration.bridges[0]
        #expect(rules.outRules.first?.crossing("sensors/kitchen") == "site/home1/sensors/kitchen")
        #expect(rules.inRules.first?.crossing("site/home1/commands/lamp") == "commands/lamp")
    }

    @Test("an mqtts:// bridge with an account reads its TLS files and the password's file, never a password")
    func link() async throws {
        let file = try EffectiveConfigurationTests.file(
            """
            bridges:
              cloud:
                url: mqtts://broker.example:8883
                tls_ca: /etc/hostname
                username: home1
                password_file: /etc/hostname
                out: [{topic: "sensors/#"}]
            """)
        let bridge = try #require(try await EffectiveConfiguration.load(file: file, environment: [:]).bridges.first)
        #expect(bridge.url == "mqtts://broker.example:8883")
        #expect(bridge.tls == BridgeTLS(ca: "/etc/hostname") && bridge.username == "home1")
        #expect(bridge.passwordFile == "/etc/hostname")
    }

    @Test(
        "a bad bridge is refused, naming its place",
        arguments: [
            ("bridges:\n  cloud: 3\n", "bridges.cloud must be a mapping"),
            ("bridges:\n  - cloud\n", "bridges in FILE must be a mapping of bridge names"),
            ("bridges:\n  cloud:\n    out: [{topic: a}]\n", "bridges.cloud.url must be mqtt://HOST[:PORT]"),
            (
                "bridges:\n  cloud:\n    url: http://x\n    out: [{topic: a}]\n",
                "bridges.cloud.url: the broker address http://x is not valid"
            ),
            (
                "bridges:\n  cloud:\n    url: mqtts://u:secret@x\n    out: [{topic: a}]\n",
                "bridges.cloud.url: an account goes in username: and its password in a file named by password_file:"
            ),
            (
                "bridges:\n  cloud:\n    url: mqtt://x\n    tls_ca: /etc/ssl/certs/ca-certificates.crt\n    out: [{topic: a}]\n",
                "bridges.cloud: tls_ca need an mqtts:// url; the link would be plain text"
            ),
            (
                "bridges:\n  cloud:\n    url: mqtts://x\n    tls_cert: /etc/hostname\n    out: [{topic: a}]\n",
                "bridges.cloud: tls_cert and tls_key go together"
            ),
            (
                "bridges:\n  cloud:\n    url: mqtts://x\n    password_file: /etc/hostname\n    out: [{topic: a}]\n",
                "bridges.cloud.password_file needs username:"
            ),
            (
                "bridges:\n  cloud:\n    url: mqtts://x\n    username: u\n    password_file: /nonexistent/pw\n    out: [{topic: a}]\n",
                "bridges.cloud.password_file: cannot read /nonexistent/pw"
            ),
            ("bridges:\n  cloud:\n    url: mqtt://x\n", "bridges.cloud must list at least one rule"),
            (
                "bridges:\n  cloud:\n    url: mqtt://x\n    out: [{topic: a}]\n    port: 3\n",
                "bridges.cloud.port is not a key"
            ),
            ("bridges:\n  c l:\n    url: mqtt://x\n    out: [{topic: a}]\n", "bridges.c l: a bridge's name is 1 to 64"),
            (
                "bridges:\n  cloud:\n    url: mqtt://x\n    out: [{topic: a, qos: 2}]\n",
                "bridges.cloud.out[0].qos: 2 is not allowed"
            ),
            (
                "bridges:\n  cloud:\n    url: mqtt://x\n    out: [{topic: \"a/#/b\"}]\n",
                "bridges.cloud.out[0].topic: a/#/b"
            ),
            (
                "bridges:\n  cloud:\n    url: mqtt://x\n    out: [{topic: \"$SYS/#\"}]\n",
                "bridges.cloud.out[0].topic: $SYS/#"
            ),
            (
                "bridges:\n  cloud:\n    url: mqtt://x\n    out: [{topic: a, prefix: up}]\n",
                "bridges.cloud.out[0].prefix: up must end with '/'"
            ),
            (
                "bridges:\n  cloud:\n    url: mqtt://x\n    out: [{topic: \"s/#\"}, {topic: \"s/#\", prefix: \"b/\"}]\n",
                "bridges.cloud.out[1].topic repeats bridges.cloud.out[0].topic (s/#)"
            ),
            (
                "bridges:\n  cloud:\n    url: mqtt://x\n    out: [{topic: a, color: red}]\n",
                "bridges.cloud.out[0].color is not a key of a rule"
            ),
            (
                "bridges:\n  cloud:\n    url: mqtt://x\n    in: [{topic: \"cmd/#\", prefix: \"site/\"}]\n",
                "bridges.cloud.in[0].topic: an in rule's topic is the upstream one"
            ),
            ("bridges:\n  cloud:\n    url: mqtt://x\n    in: {topic: a}\n", "bridges.cloud.in must be a list of rules"),
            (
                "bridges:\n  cloud:\n    url: mqtt://x\n    window: 0\n    out: [{topic: a}]\n",
                "bridges.cloud.window must be a whole number from 1 to 1000"
            ),
            (
                "bridges:\n  cloud:\n    url: mqtt://x\n    max_bytes: 10\n    out: [{topic: a}]\n",
                "bridges.cloud.max_bytes must be a whole number of bytes from 1024"
            ),
            (
                "bridges:\n  cloud:\n    url: mqtt://x\n    max_age: 1d\n    out: [{topic: a}]\n",
                "bridges.cloud.max_age must be a whole number of seconds"
            )
        ])
    func refused(text: String, problem: String) async throws {
        let file = try EffectiveConfigurationTests.file(text)
        let problems = await Self.problems(file)
        let expected = problem.replacingOccurrences(of: "FILE", with: file)
        #expect(problems.contains { $0.contains(expected) }, "\(problems)")
    }

    @Test(
        "an in rule that would arrive on a topic only Trellis publishes is refused: the upstream broker would speak as Trellis",
        arguments: [
            ("site/home1/#", "site/home1/", "reaches rpi/fromrpi"),
            ("site/home1/p2o/clients/+/button-press", "site/home1/", "reaches p2o/clients/+/+"),
            ("up/devices/#", "up/", "reaches devices/+/info")
        ])
    func forgery(filter: String, prefix: String, problem: String) async throws {
        let file = try EffectiveConfigurationTests.file(
            "bridges:\n  cloud:\n    url: mqtt://127.0.0.1:1\n    in:\n      - topic: \"\(filter)\"\n        prefix: \"\(prefix)\"\n"
        )
        let problems = await Self.problems(file)
        #expect(
            problems.contains { $0.hasPrefix("bridges.cloud.in[0].topic: \(filter)") && $0.contains(problem) },
            "\(problems)")
    }

    @Test("two bridges whose connections would share a client id on one broker are refused; on two brokers, taken")
    func clientIDClash() async throws {
        func bridges(_ secondPort: Int) -> String {
            "bridges:\n  x:\n    url: mqtt://127.0.0.1:18830\n    in: [{topic: \"up/a/#\", prefix: \"up/\"}]\n"
                + "  x-in:\n    url: mqtt://127.0.0.1:\(secondPort)\n    out: [{topic: \"sensors/#\"}]\n"
        }
        let problems = await Self.problems(try EffectiveConfigurationTests.file(bridges(18830)))
        #expect(
            problems == [
                "bridges.x-in and bridges.x: the out connection of one and the in connection of the other would both "
                    + "connect to mqtt://127.0.0.1:18830 as <relay>-bridge-x-in, and take the session from each other "
                    + "at every connect; rename one of them"
            ], "\(problems)")
        let apart = try await EffectiveConfiguration.load(
            file: try EffectiveConfigurationTests.file(bridges(18831)), environment: [:])
        #expect(apart.bridges.map(\.name).sorted() == ["x", "x-in"])
    }

    @Test("in a share group the example is taken: the group's relays take turns on one link")
    func shareGroup() async throws {
        let file = try EffectiveConfigurationTests.file(Self.example)
        let configuration = try await EffectiveConfiguration.load(
            file: file, environment: ["TRELLIS_BROKER_SHARE_GROUP": "trellis"])
        #expect(configuration.bridges.map(\.name) == ["cloud"])
    }

    @Test(
        "in a share group, an in rule onto a topic the group hears is refused: shared subscriptions have no No Local",
        arguments: [
            ("site/home1/sensors/#", "reaches sensors/#, an out rule of bridge cloud"),
            ("site/home1/rpi/torpi/+", "reaches rpi/torpi/+, a topic Trellis reads"),
            ("site/home1/p2o/buttons/+/press", "a topic Trellis reads")
        ])
    func shareGroupEcho(filter: String, problem: String) async throws {
        let file = try EffectiveConfigurationTests.file(
            Self.example.replacingOccurrences(of: "site/home1/commands/#", with: filter))
        let problems = await Self.problems(file, environment: ["TRELLIS_BROKER_SHARE_GROUP": "trellis"])
        #expect(
            problems.contains { $0.hasPrefix("bridges.cloud.in[0].topic: \(filter)") && $0.contains(problem) },
            "\(problems)")
        // Alone on its store, No Local keeps the relay from hearing what it carries in.
        _ = try await EffectiveConfiguration.load(file: file, environment: [:])
    }

    /// The problems `file` is refused with; none (and an issue recorded) when it is taken.
    static func problems(_ file: String, environment: [String: String] = [:]) async -> [String] {
        do {
            _ = try await EffectiveConfiguration.load(file: file, environment: environment)
            Issue.record("taken: \(file)")
            return []
        } catch {
            return error.problems
        }
    }
}
