import Foundation
import TrellisCore
import TrellisStore

/// A condition that lasts until something changes, notified once it has lasted past its rule's
/// `after:` (docs/notifications.md): a sensor silent since its latest reading, a device offline
/// since its status said so, the store refusing writes, a link to a broker down.
public struct LastingCondition: Sendable, Hashable {
    public var event: NotificationEvent
    /// What it is about: a sensor's address, a device's id, `store`, or a link's name.
    public var subject: String
    /// How a person knows the subject, e.g. `sensor 0x36 of Fern`.
    public var label: String
    /// When it began: the condition's notification is keyed by it, so one condition is one event.
    public var since: Date
    /// More to say, such as the store's error; never a secret.
    public var detail: String?

    public init(event: NotificationEvent, subject: String, label: String, since: Date, detail: String? = nil) {
        (self.event, self.subject, self.label, self.since, self.detail) = (event, subject, label, since, detail)
    }
}

extension NotificationRouter {
    /// How long a lasting condition's notification is held: it is sent once while the condition
    /// lasts, however often it is watched and across restarts, and again as a reminder each month it
    /// goes on (the outbox keeps sent ones a month).
    public static let lastingHold: Duration = .seconds(31 * 86_400)

    /// The notifications of the conditions that have lasted past the `after:` of a rule taking
    /// them at `now`: one per channel of each such rule, each keyed by the condition's subject and
    /// start (`sensor_silent:0x36:1767225600000`).
    public func notifications(lasting conditions: [LastingCondition], at now: Date) -> [PendingNotification] {
        conditions.flatMap { condition -> [PendingNotification] in
            let rules = plan.rules(for: condition.event).filter { rule in
                now.timeIntervalSince(condition.since) >= Double((rule.after ?? .zero).components.seconds)
            }
            return notifications(for: .lasting(condition), at: now, rules: rules).map {
                PendingNotification($0.notification, hold: Self.lastingHold, cancels: $0.cancels)
            }
        }
    }
}

extension NotificationRouter.Event {
    /// The event of a lasting condition, its key made of its kind, subject and start.
    public static func lasting(_ condition: LastingCondition) -> Self {
        let since = ISO8601Time.format(condition.since)
        let key =
            "\(condition.event.rawValue):\(condition.subject):\(Int64(condition.since.timeIntervalSince1970 * 1000))"
        let (label, detail) = (condition.label, condition.detail.map { ": \($0)" } ?? "")
        // Title, body, priority (as ntfy counts) and tags of each kind.
        let (title, body, priority, tags): (String, String, Int, [String]) =
            switch condition.event {
            case .sensorSilent: ("The \(label) is silent", "No reading from the \(label) since \(since).", 3, ["zzz"])
            case .deviceOffline:
                ("\(label) is offline", "\(label) has been offline since \(since).", 3, ["electric_plug"])
            case .storeUnwritable:
                (
                    "Trellis cannot write its state", "The state store has refused writes since \(since)\(detail).", 5,
                    ["warning"]
                )
            case .linkDown:
                (
                    "The \(label) is down", "Trellis has not been connected to the \(label) since \(since)\(detail).",
                    4, ["warning"]
                )
            case .careAlert, .buttonPressed: (label, "\(label) since \(since).", 3, [])
            }
        return Self(kind: condition.event, key: key, title: title, body: body, priority: priority, tags: tags)
    }

    /// The event of a button press (`button_pressed`, opt in), one per press.
    public static func pressed(button: String, at time: Date, total: Int) -> Self {
        Self(
            kind: .buttonPressed, key: "button_pressed:\(button):\(Int64(time.timeIntervalSince1970 * 1000))",
            title: "\(button) pressed",
            body: "Button \(button) was pressed at \(ISO8601Time.format(time)) (\(total) in all).",
            priority: 3, tags: ["bell"])
    }
}
