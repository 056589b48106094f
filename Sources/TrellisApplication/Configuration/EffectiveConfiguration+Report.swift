/// What `trellis config check` prints of a configuration: each setting with its value (a broker
/// or store password masked) and its source, whether a change needs a restart, then each bridge
/// of the file and its rules, and the notification channels (secrets by file only) and rules.
extension EffectiveConfiguration {
    package var report: [String] {
        var lines = ["# effective configuration" + (file.map { " (file: \($0))" } ?? " (no file)")]
        for setting in SettingKey.all {
            let value = Self.shown(setting.key, values[setting.key]?.content ?? setting.defaultValue)
            let source = Self.describe(self.source(setting.key), setting: setting, file: file)
            lines.append(
                "\(setting.key) = \(value)    # from \(source)\(setting.reloadable ? "" : "; a change needs a restart")"
            )
        }
        for bridge in bridges {
            lines.append(
                "bridges.\(bridge.name) = \(bridge.url), window \(bridge.window), max_bytes \(bridge.maxBytes), "
                    + "max_age \(Int(bridge.maxAge))    # from \(file ?? "the file"); a change needs a restart")
            for (direction, rules) in [("out", bridge.outRules), ("in", bridge.inRules)] {
                for (index, rule) in rules.enumerated() {
                    lines.append("bridges.\(bridge.name).\(direction)[\(index)]: \(rule.summary)")
                }
            }
        }
        for channel in notifications.channels {
            lines.append(
                "notifications.channels.\(channel.name) = \(channel.summary)    # from \(file ?? "the file"); "
                    + "a change needs a restart")
        }
        for (index, rule) in notifications.rules.enumerated() {
            lines.append(
                "notifications.rules[\(index)]: when \(rule.when.rawValue) to \(rule.to.joined(separator: ", "))"
                    + (rule.after.map { ", after \($0.components.seconds)s" } ?? "")
                    + (rule.quietHours.map { ", quiet \($0)" } ?? "") + ", hold \(rule.hold.components.seconds)s")
        }
        return lines
    }
}

extension EffectiveConfiguration {
    /// The sections that live in the file only (`bridges`, `notifications`), one line each with their
    /// keys, for `trellis config --help`.
    package static var sectionsHelp: String {
        [BridgeConfiguration.help, NotificationConfiguration.help].joined(separator: "\n")
    }
}
