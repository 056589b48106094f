/// A thing Trellis makes a Home Assistant device of (Trellis itself, a plant, a button, a fleet
/// device), named by its kind and its own id and nothing more.
///
/// Every config topic of a thing follows from it, the discovery prefix and the node base
/// (``HomeAssistantDiscovery/topics(of:)``), so whoever remembers what was published keeps this
/// and rebuilds the topics when it has to clear them. With a million buttons that is a million
/// short ids (most button ids fit in a `String` without an allocation) instead of two million
/// topics of 60 bytes and more.
public enum DiscoveryThing: Hashable, Sendable {
    case trellis
    case plant(Int64)
    case button(String)
    case device(String)

    /// The kinds of thing, by the names the retained sweep gives their node ids
    /// (``RetainedSweepPlan/nodeKind(_:)``).
    public enum Kind: String, CaseIterable, Sendable {
        case trellis, plant, button, device
    }

    public var kind: Kind {
        switch self {
        case .trellis: .trellis
        case .plant: .plant
        case .button: .button
        case .device: .device
        }
    }
}

extension HomeAssistantDiscovery {
    /// The entities each kind of thing has, as `(component, object)`, in the order its builder in
    /// `HomeAssistantDiscovery+Things.swift` makes them. What they are does not depend on the
    /// thing; `DiscoveryThingTests` holds the builders to this table.
    public static func entities(of kind: DiscoveryThing.Kind) -> [(component: String, object: String)] {
        switch kind {
        case .trellis:
            [("binary_sensor", "connectivity"), ("sensor", "messages_handled"), ("sensor", "dead_letters")]
        case .plant:
            [
                ("sensor", "moisture"), ("sensor", "temperature"), ("sensor", "last_reading"),
                ("binary_sensor", "needs_care")
            ]
        case .button:
            [("event", "press"), ("sensor", "total")]
        case .device:
            [
                ("binary_sensor", "connectivity"), ("sensor", "signal_strength"), ("sensor", "model"),
                ("button", "restart")
            ]
        }
    }

    /// The node id of `thing` (``plantNode(id:)`` and its siblings).
    public func node(of thing: DiscoveryThing) -> String {
        switch thing {
        case .trellis: base
        case let .plant(id): plantNode(id: id)
        case let .button(id): buttonNode(id: id)
        case let .device(id): deviceNode(id: id)
        }
    }

    /// The config topics of `thing` under this discovery's prefix: those its builder publishes on.
    public func topics(of thing: DiscoveryThing) -> [String] {
        let node = node(of: thing)
        return Self.entities(of: thing.kind).map { "\(prefix)/\($0.component)/\(node)/\($0.object)/config" }
    }
}
