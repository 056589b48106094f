/// trellis.example.yaml, made from ``SettingKey/all``: every setting at its default with its help,
/// nested as the file nests its keys, and the `bridges:` section commented out. `trellis config
/// example` prints it; a test keeps the shipped file equal to it.
package enum ExampleConfiguration {
    /// The text of trellis.example.yaml.
    package static var text: String {
        var lines = [
            "# trellis.example.yaml: every setting of `trellis run` at its default.",
            "# Copy it to trellis.yaml (read from the working directory) or pass --config FILE.",
            "# Environment variables (TRELLIS_SPAM_LIMIT, …) override the file; flags override both.",
            "# `trellis config check` validates a file; SIGHUP applies the keys marked reloadable."
        ]
        var open: [Substring] = []
        for setting in SettingKey.all {
            let parts = setting.key.split(separator: ".")
            let groups = Array(parts.dropLast())
            // Open the nested mappings this key needs that the previous key did not.
            let shared = zip(open, groups).prefix(while: { $0 == $1 }).count
            for depth in shared..<groups.count {
                if depth == 0 { lines.append("") }
                lines.append(String(repeating: "  ", count: depth) + "\(groups[depth]):")
            }
            open = groups
            let indent = String(repeating: "  ", count: groups.count)
            let value: String =
                switch setting.defaultValue {
                case let .string(text): "\"\(text)\""
                default: EffectiveConfiguration.render(setting.defaultValue)
                }
            lines.append("\(indent)# \(setting.help)\(setting.reloadable ? " (reloadable)" : "")")
            lines.append("\(indent)\(parts.last ?? ""): \(value)")
        }
        return (lines + bridgesExample + notificationsExample).joined(separator: "\n") + "\n"
    }

    /// The `bridges:` section, commented out: it has no default (docs/bridge.md).
    static let bridgesExample = [
        "",
        "# Upstream brokers to bridge to, none by default (docs/bridge.md); a change needs a restart.",
        "# bridges:",
        "#   cloud:",
        "#     url: mqtt://broker.example:1883",
        "#     # Over TLS (url: mqtts://HOST[:PORT]) with an account, as a cloud broker wants:",
        "#     # tls_ca: /etc/trellis/upstream-ca.pem      (the system's authorities without it)",
        "#     # tls_cert: /etc/trellis/bridge.crt        (with tls_key, for a client certificate)",
        "#     # tls_key: /etc/trellis/bridge.key",
        "#     # username: home1",
        "#     # password_file: /etc/trellis/bridge.password",
        "#     # Messages sent upstream and not yet acknowledged, at most.",
        "#     window: 64",
        "#     # The queue's bounds: past them the oldest messages are dropped, counted and logged.",
        "#     max_bytes: 67108864",
        "#     max_age: 604800",
        "#     # Local to upstream: kept in the state until the upstream broker acknowledged them.",
        "#     out:",
        "#       - topic: \"sensors/#\"",
        "#         # Added upstream: sensors/x is published as site/home1/sensors/x.",
        "#         prefix: \"site/home1/\"",
        "#         qos: 1",
        "#         retain: false",
        "#     # Upstream to local: acknowledged upstream once the local broker has the message.",
        "#     in:",
        "#       - topic: \"site/home1/commands/#\"",
        "#         # Taken off: site/home1/commands/x arrives locally as commands/x.",
        "#         prefix: \"site/home1/\"",
        "#         qos: 1"
    ]

    /// The `notifications:` section, commented out: it has no default (docs/notifications.md).
    static let notificationsExample = [
        "",
        "# Notifications through ntfy, a webhook or email, none by default (docs/notifications.md); a change needs a",
        "# restart. Secrets only in files readable by Trellis alone (chmod 600).",
        "# notifications:",
        "#   channels:",
        "#     phone: { ntfy: \"https://ntfy.example/plants\", token_file: /etc/trellis/ntfy.token }",
        "#     hooks: { webhook: \"http://127.0.0.1:8123/api/webhook/plants\", secret_file: /etc/trellis/hook.secret }",
        "#     mail: { email: \"me@example.org\", smtp: \"smtp://mail.example.org:587\", login_file: /etc/trellis/smtp.login }",
        "#     # An email channel goes over TLS only (STARTTLS, or smtps://HOST from the first byte); it may also",
        "#     # take from: plants@example.org (trellis@ this host's name without it) and ca_file: a private CA's PEM.",
        "#   rules:",
        "#     - when: care_alert        # also: store_unwritable, link_down",
        "#       to: [phone, hooks]",
        "#       quiet_hours: \"22:00-07:00\"",
        "#       # The same event is not sent again within this many seconds.",
        "#       hold: 3600"
    ]
}
