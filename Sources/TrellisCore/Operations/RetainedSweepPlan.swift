/// Which retained topics the sweep reads and what each one is the state or config of.
///
/// Retained messages outlive what they describe: a device deleted while Trellis was stopped keeps
/// its `devices/<id>/info`, and Home Assistant discovery configs published under an earlier
/// prefix, or for a plant that no longer exists, keep ghost devices in Home Assistant. The sweep
/// (on start, and when the discovery prefix changes) reads the retained topics Trellis owns, asks
/// the store whether what each describes still exists, and clears those that describe nothing.
///
/// A discovery config is Trellis's when its node id is one Trellis makes: its node base
/// (`trellis`), or the base followed by `_plant_`, `_button_` or `_device_` (`trellis_plant_3`).
/// Configs of other integrations on the same prefix are never touched. Configs are read under the current prefix, under every single-level prefix (where an
/// earlier `homeassistant.prefix` most likely was) and under each prefix named in `earlierPrefixes`.
public struct RetainedSweepPlan: Sendable, Hashable {
    /// What a retained topic is, for the sweep.
    public enum Subject: Sendable, Hashable {
        /// One of Trellis's discovery configs: `current` when it is under today's prefix; the thing its
        /// node id stands for (nil for a node id of Trellis's form that no thing has: an id
        /// ``DiscoveryID`` would not write), and its entity as `<component>/<object>`.
        case discoveryConfig(current: Bool, thing: DiscoveryThing?, entity: String)
        /// `devices/<id>/info`.
        case device(String)
        /// `<trellis>/models/<id>/info`.
        case model(String)
        /// `<trellis>/plants/<id>/state`.
        case plant(Int64)
    }

    /// Today's discovery prefix, nil while discovery is off.
    public var discoveryPrefix: String?
    /// Prefixes used before (a reload's previous prefix), swept as not current.
    public var earlierPrefixes: [String]
    /// The base of Trellis's node ids (``HomeAssistantDiscovery/base``).
    public var nodeBase: String
    /// Trellis's own topic prefix (`trellis`).
    public var trellisPrefix: String {
        didSet { topics = Topics(trellisPrefix: trellisPrefix) }
    }
    /// The retained topics of Trellis's the sweep judges, spelled with ``trellisPrefix`` once, as
    /// every retained topic the sweep reads is tried against them.
    private var topics: Topics

    public init(discoveryPrefix: String?, earlierPrefixes: [String] = [], nodeBase: String, trellisPrefix: String) {
        self.discoveryPrefix = discoveryPrefix
        self.earlierPrefixes = earlierPrefixes.filter { $0 != discoveryPrefix }
        self.nodeBase = nodeBase
        self.trellisPrefix = trellisPrefix
        topics = Topics(trellisPrefix: trellisPrefix)
    }

    /// `devices/<id>/info`, `<trellis>/models/<id>/info` and `<trellis>/plants/<id>/state`, resolved.
    private struct Topics: Sendable, Hashable {
        let device, model, plant: ResolvedTopicPattern

        /// The patterns spelled with `trellisPrefix`: the only prefix they use.
        init(trellisPrefix: String) {
            let prefixes = TopicPrefixes(trellis: trellisPrefix)
            device = TopicPattern.deviceInfo.resolved(prefixes)
            model = TopicPattern.modelInfo.resolved(prefixes)
            plant = TopicPattern.plantState.resolved(prefixes)
        }
    }

    /// The subscription filters that bring every retained topic the sweep judges.
    public var filters: [String] {
        var filters = ["+/+/+/+/config"]
        for prefix in [discoveryPrefix].compactMap({ $0 }) + earlierPrefixes where prefix.contains("/") {
            filters.append("\(prefix)/+/+/+/config")
        }
        filters += [topics.device, topics.model, topics.plant].map(\.filter)
        var seen = Set<String>()
        return filters.filter { seen.insert($0).inserted }
    }

    /// What `topic` is, nil for a topic the sweep leaves alone (not Trellis's).
    public func subject(of topic: String) -> Subject? {
        if let id = topics.device.name(in: topic) { return .device(id) }
        if let id = topics.model.name(in: topic) { return .model(id) }
        if let id = topics.plant.name(in: topic) {
            return Int64(id).map(Subject.plant)
        }
        return discoveryConfig(topic)
    }

    /// `<prefix>/<component>/<node>/<object>/config` with one of Trellis's node ids.
    private func discoveryConfig(_ topic: String) -> Subject? {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count >= 5, levels.last == "config" else { return nil }
        let node = levels[levels.count - 3]
        guard let kind = nodeKind(node) else { return nil }
        let thing = thing(of: node, kind: kind)
        let prefix = levels.dropLast(4).joined(separator: "/")
        guard prefix.isEmpty == false else { return nil }
        let entity = "\(levels[levels.count - 4])/\(levels[levels.count - 2])"
        if prefix == discoveryPrefix { return .discoveryConfig(current: true, thing: thing, entity: entity) }
        // Under another prefix: one level (any earlier prefix) or one named as earlier.
        guard levels.count == 5 || earlierPrefixes.contains(prefix) else { return nil }
        return .discoveryConfig(current: false, thing: thing, entity: entity)
    }

    /// The thing `node` (of `kind`) stands for: the id after `<base>_<kind>_`, decoded.
    private func thing(of node: Substring, kind: DiscoveryThing.Kind) -> DiscoveryThing? {
        let id = node.dropFirst(nodeBase.count + kind.rawValue.count + 2)
        switch kind {
        case .trellis: return .trellis
        case .plant: return Int64(id).flatMap { String($0) == id ? .plant($0) : nil }
        case .button: return DiscoveryID.decode(id).map(DiscoveryThing.button)
        case .device: return DiscoveryID.decode(id).map(DiscoveryThing.device)
        }
    }

    /// The kind of thing a node id of Trellis's stands for; nil for a node id not of the forms Trellis
    /// makes (``HomeAssistantDiscovery/plantNode(id:)`` and its siblings).
    public func nodeKind(_ node: Substring) -> DiscoveryThing.Kind? {
        if node == nodeBase { return .trellis }
        return [DiscoveryThing.Kind.plant, .button, .device].first { kind in
            node.hasPrefix("\(nodeBase)_\(kind.rawValue)_") && node.count > nodeBase.count + kind.rawValue.count + 2
        }
    }

}

/// What exists now, as the sweep judges retained topics by it: the buttons, devices, models and
/// plants, and the entities (`<component>/<object>`) each kind of thing has in Home Assistant (none
/// while discovery is off). Ids rather than config topics or node ids: with 10,000 buttons that is
/// 10,000 button ids (most of which fit in a `String` without an allocation), not 20,000 topics.
public struct RetainedSweepFacts: Sendable {
    public var buttonIDs: Set<String>
    public var entities: [DiscoveryThing.Kind: Set<String>]
    public var deviceIDs: Set<String>
    public var modelIDs: Set<String>
    public var plantIDs: Set<Int64>

    public init(
        buttonIDs: Set<String>, entities: [DiscoveryThing.Kind: Set<String>], deviceIDs: Set<String>,
        modelIDs: Set<String>, plantIDs: Set<Int64>
    ) {
        self.buttonIDs = buttonIDs
        self.entities = entities
        self.deviceIDs = deviceIDs
        self.modelIDs = modelIDs
        self.plantIDs = plantIDs
    }

    /// Whether a retained topic that is `subject` describes nothing that exists now.
    public func isStale(_ subject: RetainedSweepPlan.Subject) -> Bool {
        switch subject {
        case .discoveryConfig(current: false, _, _): true
        case let .discoveryConfig(current: true, thing, entity):
            thing.map { !(exists($0) && entities[$0.kind]?.contains(entity) == true) } ?? true
        case let .device(id): !deviceIDs.contains(id)
        case let .model(id): !modelIDs.contains(id)
        case let .plant(id): !plantIDs.contains(id)
        }
    }

    /// Whether today's state has `thing`.
    func exists(_ thing: DiscoveryThing) -> Bool {
        switch thing {
        case .trellis: true
        case let .plant(id): plantIDs.contains(id)
        case let .button(id): buttonIDs.contains(id)
        case let .device(id): deviceIDs.contains(id)
        }
    }
}

extension RetainedSweepPlan.Subject {
    /// The kind's name in logs and in `trellis_retained_swept_total{kind}`.
    public var kind: String {
        switch self {
        case .discoveryConfig: "discovery"
        case .device: "device"
        case .model: "model"
        case .plant: "plant"
        }
    }
}
