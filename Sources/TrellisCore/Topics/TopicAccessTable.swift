/// Every topic Trellis reads or writes, and who may publish and read each: the one declaration of
/// the deployment's rights. The broker ACLs of both account backends (the ACL file and the dynamic
/// security plugin), the Response Topic rule and the role table of docs/security.md are derived
/// from it, and a test on a real Mosquitto checks every cell of it, allowed and refused.
///
/// Topics are written with `{plant}`, `{buttons}`, `{trellis}` and `{homeassistant}` for the configured prefixes and
/// `{name}` for a level that names an account: a grant ``Grant/own(_:)`` gives the role that level
/// for its own name only (a sensor node: for each of its sensors' addresses), a grant
/// ``Grant/any(_:)`` for every name (`+`).
public enum TopicAccessTable {
    /// A role's right to a row's topic: on its own name only, or on every name.
    public struct Grant: Sendable, Hashable {
        public enum Scope: Sendable, Hashable { case own, any }
        public var role: AccessRole
        public var scope: Scope

        public static func own(_ role: AccessRole) -> Grant { Grant(role: role, scope: .own) }
        public static func any(_ role: AccessRole) -> Grant { Grant(role: role, scope: .any) }
    }

    /// One topic (or filter) and its rights.
    public struct Row: Sendable {
        /// The topic, with `{plant}`, `{buttons}`, `{trellis}` and `{name}` (see the table's doc).
        public var topic: String
        /// Who may publish on it.
        public var publish: [Grant]
        /// Who may subscribe to it and receive what is published on it.
        public var read: [Grant]
        /// For a request topic, where its replies may go: a v5 Response Topic is honoured only
        /// when it matches one of these filters (`{name}` being the requester's own name).
        public var replies: [String]
        /// What the topic carries, for the docs.
        public var about: String

        init(_ topic: String, publish: [Grant], read: [Grant], replies: [String] = [], about: String) {
            self.topic = topic
            self.publish = publish
            self.read = read
            self.replies = replies
            self.about = about
        }

        init(_ pattern: TopicPattern, publish: [Grant], read: [Grant], about: String) {
            self.init(pattern.template, publish: publish, read: read, about: about)
        }
    }

    /// The table. Trellis's own account reads and writes every topic (the last row): it reads every
    /// row someone publishes for it and writes every reply, and its subscriptions follow the
    /// configuration, so it is not held to the rows above.
    public static let rows: [Row] = [
        Row(
            "{plant}/torpi", publish: [.any(.anonymous), .any(.operator)], read: [.any(.trellis)],
            replies: ["{plant}/fromrpi"], about: "plant-tracker requests of the shared form (the released app)"),
        Row(
            "{plant}/fromrpi", publish: [.any(.trellis)], read: [.any(.anonymous), .any(.operator)],
            about: "plant-tracker replies of the shared form, which every app of the household reads"),
        Row(
            "{plant}/torpi/{name}", publish: [.own(.app), .own(.operator)], read: [.any(.trellis)],
            replies: ["{plant}/fromrpi/{name}", "{plant}/fromrpi/{name}/#"],
            about: "an app's own plant-tracker requests"),
        Row(
            "{plant}/fromrpi/{name}", publish: [.any(.trellis)], read: [.own(.app), .any(.operator)],
            about: "the replies to an app's own requests"),
        Row(
            "{plant}/fromrpi/{name}/#", publish: [.any(.trellis)], read: [.own(.app), .any(.operator)],
            about: "the replies an app asked for below its own reply topic (v5 Response Topic)"),
        Row(
            "{plant}/sensors/{name}", publish: [.own(.sensor), .any(.operator)], read: [.any(.trellis)],
            about: "a sensor's readings (`{name}` is the sensor's address)"),
        Row(
            "{buttons}/buttons/{name}/press", publish: [.own(.button), .any(.operator)], read: [.any(.trellis)],
            about: "a button's presses"),
        Row(
            .buttonState, publish: [.any(.trellis)],
            read: [.any(.app), .any(.button), .any(.homeAssistant), .any(.operator)],
            about: "a button's retained count and history"),
        Row(
            "{buttons}/clients/{name}/status", publish: [.own(.app), .own(.operator)], read: [.any(.trellis)],
            about: "an app's presence for the button service"),
        Row(
            "{buttons}/clients/{name}/register", publish: [.own(.app), .own(.operator)], read: [.any(.trellis)],
            about: "an app's registration for a button"),
        Row(
            "{buttons}/clients/{name}/unregister", publish: [.own(.app), .own(.operator)], read: [.any(.trellis)],
            about: "an app's registration removed"),
        Row(
            "{buttons}/clients/{name}/+", publish: [.any(.trellis)], read: [.own(.app), .any(.operator)],
            about: "the button service's answers and presses for an app (`register-response`, `button-press`, …)"),
        Row(
            "{trellis}/clients/{name}/request/#", publish: [.own(.app), .own(.operator)], read: [.any(.trellis)],
            replies: ["{trellis}/clients/{name}/response/#"],
            about: "an app's own JSON requests (reads; changes for operators)"),
        Row(
            "{trellis}/clients/{name}/response/#", publish: [.any(.trellis)], read: [.own(.app), .any(.operator)],
            about: "the answers to an app's own JSON requests"),
        Row(
            "{trellis}/request/devices/restart", publish: [.any(.homeAssistant), .any(.operator)],
            read: [.any(.trellis)], replies: ["{trellis}/response/#"],
            about: "a device's restart, which Home Assistant's restart button of each device sends"),
        Row(
            "{trellis}/request/#", publish: [.any(.operator)], read: [.any(.trellis)],
            replies: ["{trellis}/response/#"], about: "JSON requests of the shared form: every operator action"),
        Row(
            "{trellis}/response/#", publish: [.any(.trellis)], read: [.any(.operator)],
            about: "the answers to the shared JSON requests"),
        Row(
            "{trellis}/status", publish: [.any(.trellis)],
            read: [.any(.app), .any(.button), .any(.device), .any(.sensor), .any(.homeAssistant), .any(.operator)],
            about: "whether Trellis is online (retained)"),
        Row(
            "{trellis}/status/{name}", publish: [.any(.trellis)], read: [.any(.homeAssistant), .any(.operator)],
            about: "each relay's own status in a share group (`{name}` its client id), Home Assistant's availability"),
        Row(
            "{trellis}/stats", publish: [.any(.trellis)], read: [.any(.homeAssistant), .any(.operator)],
            about: "Trellis's statistics (retained), which its Home Assistant sensors read"),
        Row(
            "{trellis}/stats/{name}", publish: [.any(.trellis)], read: [.any(.homeAssistant), .any(.operator)],
            about: "each relay's own statistics in a share group"),
        Row(
            .plantState, publish: [.any(.trellis)], read: [.any(.homeAssistant), .any(.operator)],
            about: "a plant's retained state (readings and alerts), for Home Assistant's plant sensors"),
        Row(
            "{trellis}/alerts/{name}", publish: [.any(.trellis)], read: [.any(.homeAssistant), .any(.operator)],
            about: "a plant's retained care alerts"),
        Row(
            "{trellis}/watch/request", publish: [.any(.operator)], read: [.any(.trellis)],
            about: "`trellis watch` asking every relay for the stream of decoded traffic (`{\"seconds\":N}`)"),
        Row(
            "{trellis}/watch/events", publish: [.any(.trellis)], read: [.any(.operator)],
            about: "the decoded traffic, one JSON event per message, while a watcher asks (docs/watch.md)"),
        Row(
            "{trellis}/watch/relays/{name}", publish: [.any(.trellis)], read: [.any(.operator)],
            about: "each relay's answer to a watch request: that it streams, and until when"),
        Row(
            "{trellis}/#", publish: [.any(.trellis)], read: [.any(.operator)],
            about: "statistics, dead letters, plant states, care alerts and the rest of Trellis's own topics"),
        Row(
            .deviceStatus, publish: [.own(.device), .any(.operator)], read: [.any(.trellis)],
            about: "a device's status"),
        Row(
            .deviceTelemetry, publish: [.own(.device), .any(.operator)], read: [.any(.trellis)],
            about: "a device's telemetry"),
        Row(
            .deviceLog, publish: [.own(.device), .any(.operator)], read: [.any(.trellis)],
            about: "a device's log lines"),
        Row(
            .deviceInfo, publish: [.any(.trellis)], read: [.own(.device), .any(.homeAssistant), .any(.operator)],
            about: "a device's record, which Trellis alone writes"),
        Row(
            .deviceCommand, publish: [.any(.trellis)], read: [.own(.device), .any(.operator)],
            about: "commands to a device, which Trellis alone sends"),
        Row(
            "{homeassistant}/status", publish: [.any(.homeAssistant), .any(.operator)], read: [.any(.trellis)],
            about: "Home Assistant's birth message, on which Trellis publishes its discovery configs again"),
        Row(
            "{homeassistant}/#", publish: [.any(.trellis)], read: [.any(.homeAssistant), .any(.operator)],
            about: "the discovery configs Trellis publishes (retained) for its plants, buttons, devices and itself"),
        Row(
            "#", publish: [.any(.trellis)], read: [.any(.trellis), .any(.operator)],
            about: "every other topic: Trellis reads and writes them all, an operator reads them all")
    ]
}
