import Foundation
import TrellisCore
import Yams

/// The `notifications:` section of the configuration file: channels and rules, read from the
/// YAML node like the `bridges:` section and checked whole, each problem naming its place
/// (`notifications.rules[0].to: unknown channel pager`). Secrets are only read from files named
/// here; a file that is missing, unreadable or readable by every user is refused.
enum NotificationConfiguration {
    static let key = "notifications"
    static let channelKeys: Set<String> = [
        "ntfy", "webhook", "email", "smtp", "token_file", "secret_file", "login_file", "per_minute", "from", "ca_file"
    ]
    static let ruleKeys: Set<String> = ["when", "to", "quiet_hours", "hold", "after"]

    /// The section in `trellis config --help`, with the keys the file is checked against.
    static var help: String {
        "  \(key) (a mapping): channels.<name>, each with some of "
            + "\(channelKeys.sorted().joined(separator: ", ")), and rules, each with "
            + "\(ruleKeys.sorted().joined(separator: ", ")); docs/notifications.md."
    }

    /// The plan of the file's root `node`, or the problems that keep it from being used.
    static func parse(_ root: Node) -> (plan: NotificationPlan, problems: [String]) {
        guard case let .mapping(mapping) = root, let section = mapping[key] else { return (NotificationPlan(), []) }
        var problems: [String] = []
        guard
            let members = BridgeConfiguration.members(
                of: section, at: key, with: ["channels", "rules"], of: "notifications", &problems)
        else { return (NotificationPlan(), problems) }
        var plan = NotificationPlan()
        if let channels = members["channels"] {
            if case let .mapping(named) = channels {
                for (nameNode, body) in named {
                    let name = nameNode.string ?? "?"
                    if let channel = parseChannel(name, body, at: "\(key).channels.\(name)", &problems) {
                        plan.channels.append(channel)
                    }
                }
            } else {
                problems.append("\(key).channels must be a mapping of channel names, such as `phone:`")
            }
        }
        if let rules = members["rules"] {
            if case let .sequence(items) = rules {
                for (index, item) in items.enumerated() {
                    if let rule = parseRule(item, at: "\(key).rules[\(index)]", channels: named(plan), &problems) {
                        plan.rules.append(rule)
                    }
                }
            } else {
                problems.append("\(key).rules must be a list of rules, such as `- when: care_alert`")
            }
        }
        return (plan, problems)
    }

    private static func named(_ plan: NotificationPlan) -> Set<String> { Set(plan.channels.map(\.name)) }

    /// One channel: exactly one of `ntfy:`, `webhook:` or `email:`, with what that kind needs.
    static func parseChannel(_ name: String, _ body: Node, at place: String, _ problems: inout [String])
        -> NotificationChannel?
    {
        guard BridgeSettings.isName(name) else {
            problems.append("\(place): a channel's name is 1 to 64 of A-Z, a-z, 0-9, '_' and '-'")
            return nil
        }
        guard
            let members = BridgeConfiguration.members(
                of: body, at: place, with: channelKeys, of: "a channel", &problems)
        else { return nil }
        func text(_ key: String) -> String? { members[Node(key)]?.string.flatMap { $0.isEmpty ? nil : $0 } }
        let kinds = ["ntfy", "webhook", "email"].filter { text($0) != nil }
        guard kinds.count == 1, let kindName = kinds.first, let target = text(kindName) else {
            problems.append("\(place) must have exactly one of ntfy: URL, webhook: URL or email: ADDRESS")
            return nil
        }
        let found = problems.count
        let allowedSecret = ["ntfy": "token_file", "webhook": "secret_file", "email": "login_file"][kindName] ?? ""
        for key in ["token_file", "secret_file", "login_file"] where key != allowedSecret && text(key) != nil {
            problems.append("\(place).\(key) is not for a \(kindName) channel: use \(allowedSecret)")
        }
        for key in ["smtp", "from", "ca_file"] where kindName != "email" && text(key) != nil {
            problems.append("\(place).\(key) is for an email channel only")
        }
        var perMinute = 10
        if let value = text("per_minute") {
            if let number = Int(value), (1...600).contains(number) {
                perMinute = number
            } else {
                problems.append("\(place).per_minute must be a whole number from 1 to 600")
            }
        }
        let secret = text(allowedSecret)
        if let secret { problems += secretFileProblems(secret, at: "\(place).\(allowedSecret)") }
        let kind: NotificationChannel.Kind
        switch kindName {
        case "email":
            guard let smtp = text("smtp") else {
                problems.append(
                    "\(place).smtp must be smtp://HOST[:PORT] or smtps://HOST[:PORT], the server that takes the mail")
                return nil
            }
            if secret == nil { problems.append("\(place).login_file must name the file with the SMTP login") }
            for (key, address) in [("email", target), ("from", text("from"))] {
                if let address, !SMTPConversation.isAddress(address) {
                    problems.append("\(place).\(key): \(address) is not an address such as me@example.org")
                }
            }
            let caFile = text("ca_file")
            if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
                problems.append("\(place).ca_file: cannot read \(caFile)")
            }
            guard let server = smtpServer(smtp, at: "\(place).smtp", &problems) else { return nil }
            kind = .email(
                to: target, host: server.host, port: server.port, from: text("from"), implicitTLS: server.implicitTLS,
                caFile: caFile)
        default:
            guard httpURL(target, at: "\(place).\(kindName)", &problems) else { return nil }
            if kindName == "webhook", secret == nil {
                problems.append("\(place).secret_file must name the file with the webhook's signing secret")
            }
            kind = kindName == "ntfy" ? .ntfy(url: target) : .webhook(url: target)
        }
        guard problems.count == found else { return nil }
        return NotificationChannel(name: name, kind: kind, secretFile: secret, perMinute: perMinute)
    }

    /// One rule: `when` an event, `to` one or more configured channels, optional quiet hours and hold.
    static func parseRule(_ item: Node, at place: String, channels: Set<String>, _ problems: inout [String])
        -> NotificationRule?
    {
        guard let members = BridgeConfiguration.members(of: item, at: place, with: ruleKeys, of: "a rule", &problems)
        else { return nil }
        let found = problems.count
        let events = NotificationEvent.allCases.map(\.rawValue).joined(separator: ", ")
        let event = members["when"]?.string.flatMap(NotificationEvent.init(rawValue:))
        if event == nil { problems.append("\(place).when must be one of \(events)") }
        var targets: [String] = []
        switch members["to"] {
        case let .sequence(items)?: targets = items.map { $0.string ?? "?" }
        case let node?: targets = node.string.map { [$0] } ?? []
        case nil: break
        }
        if targets.isEmpty { problems.append("\(place).to must name one or more channels, such as `to: [phone]`") }
        for target in targets where !channels.contains(target) {
            problems.append("\(place).to: unknown channel \(target)")
        }
        var quiet: QuietHours?
        if let text = members["quiet_hours"]?.string {
            quiet = QuietHours(parsing: text)
            if quiet == nil { problems.append("\(place).quiet_hours must be HH:MM-HH:MM, such as \"22:00-07:00\"") }
        }
        var hold = Duration.seconds(3600)
        if let text = members["hold"]?.string {
            if let seconds = span(text), seconds <= 30 * 86_400 {
                hold = .seconds(seconds)
            } else {
                problems.append("\(place).hold must be seconds or a span such as 90m, from 0 to 30 days")
            }
        }
        var after: Duration?
        if let text = members["after"]?.string {
            if let event, event.defaultAfter == nil {
                problems.append(
                    "\(place).after is for a lasting condition (sensor_silent, device_offline, "
                        + "store_unwritable, link_down); \(event.rawValue) is notified as it happens")
            } else if let seconds = span(text), (1...(365 * 86_400)).contains(seconds) {
                after = .seconds(seconds)
            } else {
                problems.append("\(place).after must be seconds or a span such as 30m, 6h or 2d, up to a year")
            }
        }
        guard problems.count == found, let event else { return nil }
        return NotificationRule(when: event, to: targets, quietHours: quiet, hold: hold, after: after)
    }

    /// Whole seconds, or a span of a whole number and `s`, `m`, `h`, `d` or `w`.
    static func span(_ text: String) -> Int? {
        if let seconds = Int(text) { return seconds >= 0 ? seconds : nil }
        return DeadLetterSince.span(text).map { Int($0) }
    }

    /// Whether `text` is an http:// or https:// URL with a host and no account in it (noted if not).
    static func httpURL(_ text: String, at place: String, _ problems: inout [String]) -> Bool {
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(),
            ["http", "https"].contains(scheme), let host = url.host, !host.isEmpty
        else {
            problems.append("\(place): \(withoutAccount(text)) is not an http:// or https:// URL")
            return false
        }
        guard url.user == nil, url.password == nil else {
            problems.append("\(place): a secret goes in its file, not in the URL")
            return false
        }
        return true
    }

    /// The host and port of `smtp://HOST[:PORT]` (STARTTLS, 587 by default) or `smtps://HOST[:PORT]`
    /// (TLS from the start, 465 by default), noted if it is something else.
    static func smtpServer(_ text: String, at place: String, _ problems: inout [String])
        -> (host: String, port: Int, implicitTLS: Bool)?
    {
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(),
            ["smtp", "smtps"].contains(scheme), let host = url.host, !host.isEmpty, url.path.isEmpty || url.path == "/",
            url.query == nil, url.fragment == nil
        else {
            problems.append("\(place): \(withoutAccount(text)) is not smtp://HOST[:PORT] or smtps://HOST[:PORT]")
            return nil
        }
        guard url.user == nil, url.password == nil else {
            problems.append("\(place): the login goes in login_file, not in the URL")
            return nil
        }
        // An IPv6 address comes in brackets, which are the URL's, not the address's.
        let address = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return (address, url.port ?? (scheme == "smtps" ? 465 : 587), scheme == "smtps")
    }

    /// `text` as a problem may quote it: whatever stands before an `@` after the scheme (an
    /// account, perhaps with its password) is `***`, even where the URL does not parse.
    static func withoutAccount(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let start = text.range(of: "://")?.upperBound ?? text.startIndex
        guard start <= at else { return text }
        return String(text[..<start]) + "***" + String(text[at...])
    }

    /// What is wrong with a secret file: missing, unreadable, or readable by every user.
    static func secretFileProblems(_ path: String, at place: String) -> [String] {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            FileManager.default.isReadableFile(atPath: path)
        else { return ["\(place): cannot read \(path)"] }
        let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0
        if mode & 0o004 != 0 {
            return ["\(place): \(path) is readable by every user; make it private (chmod 600 \(path))"]
        }
        return []
    }
}
