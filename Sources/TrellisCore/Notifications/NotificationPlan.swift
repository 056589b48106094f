import Foundation

/// What the relay notifies and through which channels: the `notifications:` section of the
/// configuration file as values (docs/notifications.md). No secret is held here, only the paths
/// of the files that hold them.
public struct NotificationPlan: Sendable, Hashable {
    public var channels: [NotificationChannel]
    public var rules: [NotificationRule]

    public init(channels: [NotificationChannel] = [], rules: [NotificationRule] = []) {
        (self.channels, self.rules) = (channels, rules)
    }

    /// The channel named `name`.
    public func channel(_ name: String) -> NotificationChannel? {
        channels.first { $0.name == name }
    }

    /// The rules that take `event`.
    public func rules(for event: NotificationEvent) -> [NotificationRule] {
        rules.filter { $0.when == event }
    }
}

/// What a rule may be about.
public enum NotificationEvent: String, Sendable, CaseIterable, Hashable {
    /// A care alert of a linked plant starts or clears (`trellis/alerts/<plant>`).
    case careAlert = "care_alert"
    /// A sensor silent longer than a limit.
    case sensorSilent = "sensor_silent"
    /// A device offline longer than a limit.
    case deviceOffline = "device_offline"
    /// A button pressed (opt in).
    case buttonPressed = "button_pressed"
    /// The store refuses writes.
    case storeUnwritable = "store_unwritable"
    /// A bridge's upstream link or the broker link is down.
    case linkDown = "link_down"

    /// How long a condition of this kind must last before it is notified, unless a rule says
    /// (`after:`); nil for events that are notified as they happen.
    public var defaultAfter: Duration? {
        switch self {
        case .careAlert, .buttonPressed: nil
        case .sensorSilent: .seconds(86_400)
        case .deviceOffline: .seconds(3600)
        case .storeUnwritable: .seconds(60)
        case .linkDown: .seconds(300)
        }
    }
}

/// A rule: events of one kind go to channels, held through quiet hours.
public struct NotificationRule: Sendable, Hashable {
    public var when: NotificationEvent
    public var to: [String]
    public var quietHours: QuietHours?
    /// How long the same event is not notified again (sent once per event).
    public var hold: Duration
    /// For a lasting condition (a sensor silent, a device offline, the store unwritable, a link
    /// down): how long it must last before it is notified; nil for events notified as they happen.
    public var after: Duration?

    public init(
        when: NotificationEvent, to: [String], quietHours: QuietHours? = nil, hold: Duration = .seconds(3600),
        after: Duration? = nil
    ) {
        (self.when, self.to, self.quietHours, self.hold) = (when, to, quietHours, hold)
        self.after = after ?? when.defaultAfter
    }
}

/// A channel and where it delivers.
public struct NotificationChannel: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// ntfy: POST to the topic URL, an optional bearer token in `secretFile`.
        case ntfy(url: String)
        /// A webhook: POST of a JSON body signed with the secret in `secretFile`.
        case webhook(url: String)
        /// Email to `to` through the SMTP server at `host`:`port`, the login in `secretFile`: TLS by
        /// STARTTLS, or from the first byte with `implicitTLS` (`smtps://`); the server's certificate
        /// checked against the system's trusted CAs, or those in `caFile`. Sent from `from`, or
        /// `trellis@` the host's name when nil.
        case email(
            to: String, host: String, port: Int, from: String? = nil, implicitTLS: Bool = false, caFile: String? = nil)
    }

    public var name: String
    public var kind: Kind
    /// The file holding the channel's secret (token, signing secret or login), if any.
    public var secretFile: String?
    /// At most this many notifications a minute go through the channel; the rest wait.
    public var perMinute: Int

    public init(name: String, kind: Kind, secretFile: String?, perMinute: Int = 10) {
        (self.name, self.kind, self.secretFile, self.perMinute) = (name, kind, secretFile, perMinute)
    }

    /// The channel as `trellis config check` shows it: its kind and address, the secret file by
    /// path only.
    public var summary: String {
        let target =
            switch kind {
            case let .ntfy(url): "ntfy \(url)"
            case let .webhook(url): "webhook \(url)"
            case let .email(to, host, port, from, implicitTLS, caFile):
                "email \(to) via \(implicitTLS ? "smtps" : "smtp")://\(host.contains(":") ? "[\(host)]" : host):\(port)"
                    + (from.map { " from \($0)" } ?? "")
                    + (caFile.map { ", CA in \($0)" } ?? "")
            }
        return target + (secretFile.map { ", secret in \($0) (not shown)" } ?? "") + ", at most \(perMinute)/min"
    }
}
