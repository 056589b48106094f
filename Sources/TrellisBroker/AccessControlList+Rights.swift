/// One right on one topic filter. Both account backends of the secure profile grant the same
/// rights: the ACL file writes them as `pattern`/`topic` lines, the dynamic security plugin as the
/// ACLs of its roles (`DynamicSecurityRoles`). Keeping them here, once, keeps the two equal.
public struct TopicRight: Sendable, Hashable {
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
}

extension AccessControlList {
    /// The rights every account has on its own topics, for the user `user` (`%u` in the ACL
    /// file's patterns, the account's name in the plugin's per-account role).
    public static func personalRights(of user: String, topics: Topics = Topics()) -> [TopicRight] {
        let rpi = topics.plant, p2o = topics.buttons, own = topics.trellis
        return [
            // Its own plant tracker request and reply topics (replies may go below its own),
            TopicRight(.write, "\(rpi)/torpi/\(user)"),
            TopicRight(.read, "\(rpi)/fromrpi/\(user)"),
            TopicRight(.read, "\(rpi)/fromrpi/\(user)/#"),
            // its own button-service topics,
            TopicRight(.write, "\(p2o)/clients/\(user)/status"),
            TopicRight(.write, "\(p2o)/clients/\(user)/register"),
            TopicRight(.write, "\(p2o)/clients/\(user)/unregister"),
            TopicRight(.read, "\(p2o)/clients/\(user)/+"),
            // and its own JSON service topics.
            TopicRight(.write, "\(own)/clients/\(user)/request/#"),
            TopicRight(.read, "\(own)/clients/\(user)/response/#"),
        ]
    }

    /// What every account may read whoever it is: Trellis's availability and the buttons' public state.
    public static func commonRights(topics: Topics = Topics()) -> [TopicRight] {
        [TopicRight(.read, "\(topics.trellis)/status"), TopicRight(.read, "\(topics.buttons)/buttons/+/state")]
    }
}

extension AccessControlList.Role {
    /// The rights an account of this role has beyond the personal and common ones that name the
    /// account itself: a button's press, a device's topics, a sensor node's readings.
    public func namedRights(of name: String, sensors: [String], topics: AccessControlList.Topics = .init()) -> [TopicRight] {
        switch self {
        case .client, .operator, .trellis:
            return []
        case .button:
            return [TopicRight(.write, "\(topics.buttons)/buttons/\(name)/press")]
        case .device:
            // Not info or command: Trellis owns them, so a device cannot forge its own record.
            return ["status", "telemetry", "log"].map { TopicRight(.write, "devices/\(name)/\($0)") }
                + [TopicRight(.read, "devices/\(name)/info"), TopicRight(.read, "devices/\(name)/command")]
        case .sensor:
            return sensors.map { TopicRight(.write, "\(topics.plant)/sensors/\($0)") }
        }
    }

    /// The rights every account of this role has, whatever its name: the operator's shared JSON
    /// topics, and every topic for Trellis itself.
    public func roleRights(topics: AccessControlList.Topics = .init()) -> [TopicRight] {
        switch self {
        case .client, .button, .device, .sensor:
            return []
        case .operator:
            return [TopicRight(.write, "\(topics.trellis)/request/#"), TopicRight(.read, "\(topics.trellis)/response/#"),
                    TopicRight(.read, "\(topics.trellis)/#")]
        case .trellis:
            return [TopicRight(.readwrite, "#")]
        }
    }
}
