import TrellisCore
import TrellisMQTT
import Yams

/// The `bridges:` section of the configuration file: a mapping of bridge names to their upstream
/// broker and rules, read from the YAML node (its shape, lists of rules, is beyond the flat settings
/// table) and checked whole, each problem naming its place (`bridges.cloud.out[0].topic`).
enum BridgeConfiguration {
    static let key = "bridges"
    static let bridgeKeys: Set<String> = [
        "url", "out", "in", "window", "max_bytes", "max_age", "tls_ca", "tls_cert", "tls_key", "username",
        "password_file"
    ]
    static let ruleKeys: Set<String> = ["topic", "prefix", "qos", "retain"]

    /// The section in `trellis config --help`, with the keys the file is checked against.
    static var help: String {
        "  \(key).<name> (a mapping): An upstream broker to bridge to, with the keys "
            + "\(bridgeKeys.subtracting(["out", "in"]).sorted().joined(separator: ", ")), and its out and in rules, "
            + "each with \(ruleKeys.sorted().joined(separator: ", ")); docs/bridge.md."
    }

    /// The bridges of the file's root `node`, or the problems that keep them from being used.
    static func parse(_ root: Node, file: String) -> (bridges: [BridgeSettings], problems: [String]) {
        guard case let .mapping(mapping) = root, let section = mapping[key] else { return ([], []) }
        guard case let .mapping(named) = section else {
            return ([], ["\(key) in \(file) must be a mapping of bridge names, such as `cloud:` with `url:` below it"])
        }
        var bridges: [BridgeSettings] = []
        var problems: [String] = []
        for (nameNode, body) in named {
            let name = nameNode.string ?? "?"
            let place = "\(key).\(name)"
            guard BridgeSettings.isName(name) else {
                problems.append("\(place): a bridge's name is 1 to 64 of A-Z, a-z, 0-9, '_' and '-'")
                continue
            }
            guard let members = Self.members(of: body, at: place, with: bridgeKeys, of: "a bridge", &problems) else {
                continue
            }
            guard let url = members["url"]?.string else {
                problems.append("\(place).url must be mqtt://HOST[:PORT], the upstream broker")
                continue
            }
            let address: BrokerURL
            do {
                address = try BrokerURL(parsing: url)
            } catch {
                problems.append("\(place).url: \(error)")
                continue
            }
            guard let link = link(members, url: address, at: place, &problems) else { continue }
            /// The whole number under `key` in `range`, `fallback` without one; nil (a problem
            /// noted) when it is something else.
            func number(_ key: String, _ range: ClosedRange<Int>, _ fallback: Int, _ allowed: String) -> Int? {
                guard let text = members[Node(key)]?.string else { return fallback }
                guard let value = Int(text), range.contains(value) else {
                    problems.append("\(place).\(key) must be \(allowed)")
                    return nil
                }
                return value
            }
            guard let window = number("window", 1...1_000, 64, "a whole number from 1 to 1000"),
                let maxBytes = number(
                    "max_bytes", 1_024...(1 << 40), BridgeSettings.defaultMaxBytes,
                    "a whole number of bytes from 1024 to 2^40"),
                let maxAge = number(
                    "max_age", 1...(100 * 365 * 86_400), Int(BridgeSettings.defaultMaxAge),
                    "a whole number of seconds from 1 to 100 years")
            else { continue }
            let (out, outProblems) = parseRules(members["out"], direction: .out, place: "\(place).out")
            let (into, inProblems) = parseRules(members["in"], direction: .in, place: "\(place).in")
            problems += outProblems + inProblems
            let rules = out + into
            if rules.isEmpty && outProblems.isEmpty && inProblems.isEmpty {
                problems.append(
                    "\(place) must list at least one rule under out: or in:, such as `out: [{topic: \"sensors/#\"}]`")
            }
            var bridge = BridgeSettings(
                name: name, host: address.host, port: address.port, rules: rules, window: window,
                maxBytes: maxBytes, maxAge: Double(maxAge))
            (bridge.tls, bridge.username, bridge.passwordFile) = link
            bridges.append(bridge)
        }
        return (bridges, problems)
    }

    /// The `in` rules whose local topics reach topics only Trellis publishes (its replies, states,
    /// records, commands): the relay publishes what comes in with its own rights, so such a rule
    /// would let the upstream broker speak as Trellis on the local broker. Each is refused, naming
    /// the rule and the topic it reaches.
    static func forgeries(_ bridges: [BridgeSettings], prefixes: TopicPrefixes) -> [String] {
        let outputs = TopicAccessTable.trellisOutputs(prefixes: prefixes).map(TopicFilter.init)
        return bridges.flatMap { bridge in
            bridge.inRules.enumerated().compactMap { index, rule in
                let local = TopicFilter(rule.crossedFilter)
                guard let reached = outputs.first(where: local.overlaps) else { return nil }
                return "\(key).\(bridge.name).in[\(index)].topic: \(rule.filter.text) arrives locally as \(local) and "
                    + "reaches \(reached), which only Trellis publishes; carry it to a topic of its own"
            }
        }
    }

    /// The bridges whose upstream connections would share a client id on one broker: bridge `x`'s
    /// `in` connection and bridge `x-in`'s `out` connection are both `<relay>-bridge-x-in`, and two
    /// connections under one id take the session from each other at every connect, for good.
    static func clientIDClashes(_ bridges: [BridgeSettings]) -> [String] {
        var seen: [String: (bridge: String, direction: BridgeRule.Direction)] = [:]
        var problems: [String] = []
        for bridge in bridges.sorted(by: { $0.name < $1.name }) {
            for direction in bridge.directions {
                let name = bridge.connectionName(direction)
                let place = "\(bridge.url) as <relay>-\(name)"
                if let other = seen[place] {
                    problems.append(
                        "\(key).\(bridge.name) and \(key).\(other.bridge): the \(direction) connection of one and the "
                            + "\(other.direction) connection of the other would both connect to \(place), and take the "
                            + "session from each other at every connect; rename one of them")
                }
                seen[place] = (bridge.name, direction)
            }
        }
        return problems
    }

    /// In a share group, the `in` rules whose messages the group would hear again: the relays take
    /// the group's topics through shared subscriptions, on which No Local is not allowed (MQTT 5,
    /// 3.8.3.1), so a message carried onto a topic Trellis reads (a request, a reading, a press) or
    /// onto an `out` rule's topics would be handled as sent locally, or sent back upstream.
    static func groupEchoes(_ bridges: [BridgeSettings], prefixes: TopicPrefixes) -> [String] {
        let heard =
            TopicAccessTable.inputs(prefixes: prefixes).map { ($0, "a topic Trellis reads") }
            + bridges.flatMap { bridge in
                bridge.outRules.map { ($0.filter.text, "an out rule of bridge \(bridge.name)") }
            }
        return bridges.flatMap { bridge in
            bridge.inRules.enumerated().compactMap { index, rule in
                let local = TopicFilter(rule.crossedFilter)
                guard let (filter, what) = heard.first(where: { local.overlaps(TopicFilter($0.0)) }) else { return nil }
                return "\(key).\(bridge.name).in[\(index)].topic: \(rule.filter.text) arrives locally as \(local) and "
                    + "reaches \(filter), \(what), which a share group hears without No Local; "
                    + "carry it to a topic of its own"
            }
        }
    }

    /// The members of `node` when it is a mapping, each key not in `keys` noted as a problem; nil
    /// (noted too) when it is not a mapping.
    static func members(
        of node: Node, at place: String, with keys: Set<String>, of what: String, _ problems: inout [String]
    ) -> Node.Mapping? {
        guard case let .mapping(members) = node else {
            problems.append("\(place) must be a mapping with \(keys.sorted().joined(separator: ", ")) as its keys")
            return nil
        }
        for member in members.keys.compactMap(\.string) where !keys.contains(member) {
            problems.append("\(place).\(member) is not a key of \(what): use \(keys.sorted().joined(separator: ", "))")
        }
        return members
    }

    /// The rules of a list under `place`, each checked by ``BridgeRule/problems``.
    static func parseRules(_ node: Node?, direction: BridgeRule.Direction, place: String) -> ([BridgeRule], [String]) {
        guard let node else { return ([], []) }
        guard case let .sequence(items) = node else { return ([], ["\(place) must be a list of rules"]) }
        var rules: [BridgeRule] = []
        var problems: [String] = []
        for (index, item) in items.enumerated() {
            let at = "\(place)[\(index)]"
            guard let members = Self.members(of: item, at: at, with: ruleKeys, of: "a rule", &problems) else {
                continue
            }
            let qosText = members["qos"]?.string ?? "1"
            let retainText = members["retain"]?.string ?? "false"
            guard let qos = Int(qosText) else {
                problems.append("\(at).qos must be 0 or 1")
                continue
            }
            guard let retain = Bool(retainText) else {
                problems.append("\(at).retain must be true or false")
                continue
            }
            let rule = BridgeRule(
                direction: direction, filter: members["topic"]?.string ?? "", prefix: members["prefix"]?.string ?? "",
                qos: qos, retain: retain)
            var found = rule.problems.map { "\(at).\($0)" }
            // A bridge's queue and its drops are counted by the out rule's topic filter.
            if direction == .out, let earlier = rules.firstIndex(where: { $0.filter.text == rule.filter.text }) {
                found.append(
                    "\(at).topic repeats \(place)[\(earlier)].topic (\(rule.filter.text)): the queue is counted by an out rule's topic; make one rule of the two"
                )
            }
            problems += found
            if found.isEmpty { rules.append(rule) }
        }
        return (rules, problems)
    }
}
