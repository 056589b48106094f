#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One retained discovery message: a config on `<prefix>/<component>/<node_id>/<object_id>/config`.
public struct DiscoveryConfig: Sendable, Hashable {
    public var topic: String
    /// Compact JSON with sorted keys, so an unchanged config is byte for byte the same.
    public var payload: [UInt8]

    public init(topic: String, payload: [UInt8]) {
        self.topic = topic
        self.payload = payload
    }
}

/// Home Assistant MQTT discovery for what Trellis knows: builds the retained config messages that
/// make Trellis itself, each plant, each button and each fleet device a Home Assistant device with
/// its entities. Pure: the relay decides when to publish them.
///
/// Identity: every `unique_id`, `node_id` and device identifier is built from Trellis's own stable
/// ids (a plant's store id, a button id, a device id), never from a name a user can change, so a
/// rename only renames. Names go into `device.name` alone; entity names are the part after it
/// (`has_entity_name` style: "Fern" + "Moisture").
///
/// Availability: every entity but Trellis's own connectivity sensor follows `trellis/status`, so
/// everything shows unavailable when Trellis is gone. With several relays, pass each one's status
/// topic: the entities then use `availability_mode: any`.
public struct HomeAssistantDiscovery: Sendable, Hashable {
    /// The discovery prefix (`homeassistant`).
    public var prefix: String
    /// The base of every node id and unique id, `trellis` unless Trellis's own prefix differs.
    public var base: String
    /// Retained `online` / `offline` topics of the relays; the first is this relay's.
    public var statusTopics: [String]
    /// The version put in `origin` and in Trellis's own `device` block.
    public var version: String

    public init(
        prefix: String = "homeassistant", trellisPrefix: String = "trellis", statusTopics: [String]? = nil,
        version: String = TrellisVersion.current
    ) {
        self.prefix = prefix
        self.base = DiscoveryID.encode(trellisPrefix)
        self.statusTopics = statusTopics ?? ["\(trellisPrefix)/status"]
        self.version = version
    }

    /// The same discovery with other status topics.
    public func withStatusTopics(_ topics: [String]) -> HomeAssistantDiscovery {
        var copy = self
        copy.statusTopics = topics
        return copy
    }

    /// The topic on which Home Assistant announces itself (`online` after it starts).
    public var birthTopic: String { "\(prefix)/status" }

    // MARK: Building blocks

    /// The identifier of Trellis's own device, the `via_device` of every other one.
    var hubIdentifier: String { base }

    var origin: JSONValue {
        .object(["name": .string("Trellis"), "sw_version": .string(version)])
    }

    /// `availability` (and `availability_mode` when there are several relays).
    func availability(into config: inout [String: JSONValue]) {
        config["availability"] = .array(
            statusTopics.map {
                .object([
                    "topic": .string($0), "payload_available": .string("online"),
                    "payload_not_available": .string("offline")
                ])
            })
        if statusTopics.count > 1 { config["availability_mode"] = .string("any") }
    }

    /// A Home Assistant device block.
    func deviceBlock(identifier: String, name: String, model: String, viaHub: Bool = true) -> JSONValue {
        var device: [String: JSONValue] = [
            "identifiers": .array([.string(identifier)]),
            "name": .string(name),
            "manufacturer": .string("Trellis"),
            "model": .string(model)
        ]
        if viaHub { device["via_device"] = .string(hubIdentifier) } else { device["sw_version"] = .string(version) }
        return .object(device)
    }

    /// One entity's config message: the common keys (`unique_id`, `name`, `device`, `origin`,
    /// `availability` unless `available` is false) merged with `keys`.
    func entity(
        _ component: String, node: String, object: String, name: String?, device: JSONValue,
        available: Bool = true, _ keys: [String: JSONValue]
    ) -> DiscoveryConfig {
        var config = keys
        config["unique_id"] = .string("\(node)_\(object)")
        config["name"] = name.map(JSONValue.string) ?? .null
        config["device"] = device
        config["origin"] = origin
        if available { availability(into: &config) }
        return DiscoveryConfig(
            topic: "\(prefix)/\(component)/\(node)/\(object)/config",
            payload: JSONEnvelope.encode(JSONValue.object(config)))
    }

    /// The zero-byte retained messages that remove `configs` from Home Assistant.
    public static func removals(of configs: [DiscoveryConfig]) -> [DiscoveryConfig] {
        configs.map { DiscoveryConfig(topic: $0.topic, payload: []) }
    }
}
