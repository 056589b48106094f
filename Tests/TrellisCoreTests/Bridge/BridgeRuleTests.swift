import Testing
import TrellisCore

/// A bridge rule's topic mapping and its checks.
@Suite("Bridge: rules")
struct BridgeRuleTests {
    @Test("out adds the prefix to what the filter matches; in takes it off what the upstream filter matches")
    func crossing() {
        let out = BridgeRule(direction: .out, filter: "sensors/#", prefix: "site/home1/")
        #expect(out.crossing("sensors/x") == "site/home1/sensors/x")
        #expect(out.crossing("sensors") == "site/home1/sensors")
        #expect(out.crossing("devices/x/log") == nil)
        let down = BridgeRule(direction: .in, filter: "site/home1/commands/#", prefix: "site/home1/")
        #expect(down.crossing("site/home1/commands/pump") == "commands/pump")
        #expect(down.crossing("site/home2/commands/pump") == nil)
        #expect(BridgeRule(direction: .in, filter: "#", prefix: "site/").crossing("other/x") == nil)
        #expect(BridgeRule(direction: .in, filter: "#", prefix: "site/").crossing("site/") == nil, "nothing left")
        #expect(BridgeRule(direction: .out, filter: "a/+").crossing("a/b") == "a/b")
    }

    @Test(
        "bad rules are named member by member",
        arguments: [
            (BridgeRule(direction: .out, filter: ""), "topic: empty"),
            (BridgeRule(direction: .out, filter: "a/#/b"), "topic: a/#/b: '#' must be a whole level and the last one"),
            (BridgeRule(direction: .out, filter: "a/b+"), "topic: a/b+: '+' must be a whole level"),
            (BridgeRule(direction: .out, filter: "$SYS/#"), "topic: $SYS/# is a broker's own topic"),
            (BridgeRule(direction: .out, filter: "a/#", prefix: "site"), "prefix: site must end with '/'"),
            (BridgeRule(direction: .out, filter: "a/#", prefix: "site/+/"), "prefix: site/+/ has a wildcard"),
            (BridgeRule(direction: .out, filter: "a/#", qos: 2), "qos: 2 is not allowed: use 0 or 1"),
            (
                BridgeRule(direction: .in, filter: "commands/#", prefix: "site/"),
                "topic: an in rule's topic is the upstream one"
            ),
            // Wildcards over the prefix would bring down topics no check of the local side sees.
            (
                BridgeRule(direction: .in, filter: "site/#", prefix: "site/home1/"),
                "topic: an in rule's topic is the upstream one"
            ),
            (
                BridgeRule(direction: .in, filter: "+/home1/#", prefix: "site/home1/"),
                "topic: an in rule's topic is the upstream one"
            )
        ])
    func problems(rule: BridgeRule, problem: String) {
        #expect(rule.problems.count == 1)
        #expect(rule.problems.first?.hasPrefix(problem) == true, "\(rule.problems)")
    }

    @Test("the issue's example is allowed as written")
    func example() {
        #expect(BridgeRule(direction: .out, filter: "sensors/#", prefix: "site/home1/", qos: 1).problems.isEmpty)
        #expect(
            BridgeRule(direction: .in, filter: "site/home1/commands/#", prefix: "site/home1/", qos: 1).problems.isEmpty)
    }
}
