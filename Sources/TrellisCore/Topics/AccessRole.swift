import Foundation

/// Who a client is to the broker, which decides the topics it may publish and read
/// (``TopicAccessTable`` holds every right of every role).
public enum AccessRole: String, Sendable, CaseIterable, Hashable {
    /// A client without an account, where the broker lets one in: the released Plant-Tracker app,
    /// which sets no user name. It gets the shared plant-tracker topics and nothing else.
    case anonymous
    /// An app or client with an account: its own request and reply topics.
    case app
    /// A button: its own presses.
    case button
    /// A device of the fleet: its own status, telemetry and log, and its own record and commands.
    case device
    /// A sensor node: the readings of its own sensors.
    case sensor
    /// Home Assistant: reads the discovery configs Trellis publishes and the states they name,
    /// announces itself (its birth message), and may press a device's restart button, the one
    /// fleet action its discovery configs offer. Nothing else: no plant, button or catalog change,
    /// no dead letter, no other operator action.
    case homeAssistant
    /// An operator: may send Trellis every request and event and read every topic, but not
    /// publish what Trellis publishes (replies, states, commands), so it cannot forge them.
    case `operator`
    /// Trellis itself: reads every request and event, writes every reply.
    case trellis

    /// How the role is named in the docs' role table.
    public var title: String {
        switch self {
        case .anonymous: "anonymous app"
        case .app: "app account"
        case .button: "button"
        case .device: "device"
        case .sensor: "sensor"
        case .homeAssistant: "Home Assistant"
        case .operator: "operator"
        case .trellis: "Trellis"
        }
    }
}

/// One right on one topic filter, as a broker grants it: the ACL file writes it as a `topic`
/// line, the dynamic security plugin as the ACLs of a role.
public struct TopicRight: Sendable, Hashable, CustomStringConvertible {
    /// Read is subscribing and receiving; write is publishing.
    public enum Access: String, Sendable {
        case read
        case write
        case readwrite
    }

    public var access: Access
    public var topic: String

    public init(_ access: Access, _ topic: String) {
        self.access = access
        self.topic = topic
    }

    public var description: String { "\(access.rawValue) \(topic)" }
}

/// The topic prefixes the relay is configured with (`plant.prefix`, `buttons.prefix`, its own and
/// Home Assistant's `homeassistant.discovery_prefix`), which the table's topics are written with.
public struct TopicPrefixes: Sendable, Equatable {
    public var plant: String
    public var buttons: String
    public var trellis: String
    public var homeAssistant: String

    public init(
        plant: String = "rpi", buttons: String = "p2o", trellis: String = "trellis",
        homeAssistant: String = "homeassistant"
    ) {
        self.plant = plant
        self.buttons = buttons
        self.trellis = trellis
        self.homeAssistant = homeAssistant
    }

    /// `topic` with `{plant}`, `{buttons}`, `{trellis}` and `{homeassistant}` replaced by the prefixes.
    public func expand(_ topic: String) -> String {
        topic.replacingOccurrences(of: "{plant}", with: plant)
            .replacingOccurrences(of: "{buttons}", with: buttons)
            .replacingOccurrences(of: "{trellis}", with: trellis)
            .replacingOccurrences(of: "{homeassistant}", with: homeAssistant)
    }
}
