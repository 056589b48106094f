import Configuration
import Foundation
import SystemPackage
import TrellisCore
import TrellisMQTT
import TrellisRelay
import TrellisStore
import TrellisStorePostgres
import Yams

/// Every setting's value and where it came from, resolved from flags over `TRELLIS_…`
/// environment variables over the YAML file over the defaults (swift-configuration providers).
package struct EffectiveConfiguration: Sendable {
    package enum Source: String, Sendable {
        case flag, environment, file, `default`
    }

    /// Problems that make a configuration unusable, each naming the key and what is allowed.
    package struct Invalid: Error, CustomStringConvertible {
        package var problems: [String]
        package var description: String { problems.joined(separator: "\n") }
    }

    package private(set) var values: [String: (content: ConfigContent, source: Source)] = [:]
    /// The bridges of the file's `bridges:` section (``BridgeConfiguration``), none without one.
    package private(set) var bridges: [BridgeSettings] = []
    /// The channels and rules of the file's `notifications:` section (``NotificationConfiguration``).
    package private(set) var notifications = NotificationPlan()
    /// The file that was read, if any.
    package var file: String?

    /// `trellis.yaml` in the working directory, read when present and no file is named.
    package static let defaultFile = "trellis.yaml"

    /// The `TRELLIS_…` variables every command reads when it is given none: the process's, unless
    /// the task runs with others (a command run inside another program, such as a test).
    @TaskLocal package static var environment: [String: String]? = nil

    /// Resolves every key. `file` nil means `trellis.yaml` when present; a named file must exist.
    /// `environment` nil means ``environment``, else the process's.
    package static func load(
        file: String?,
        environment: [String: String]? = nil,
        flags: [String: ConfigContent] = [:]
    ) async throws(Invalid) -> EffectiveConfiguration {
        let environment = environment ?? Self.environment ?? ProcessInfo.processInfo.environment
        var problems: [String] = []
        let path = file ?? (FileManager.default.fileExists(atPath: defaultFile) ? defaultFile : nil)
        var fileProvider: (any ConfigProvider)?
        var bridges: [BridgeSettings] = []
        var notifications = NotificationPlan()
        if let path {
            do {
                // Parsed once, for the unknown keys and the bridges alike.
                let root = try fileNode(path)
                problems += try unknownKeys(of: root, in: path)
                if let root {
                    let parsed = BridgeConfiguration.parse(root, file: path)
                    bridges = parsed.bridges
                    problems += parsed.problems
                    let notified = NotificationConfiguration.parse(root)
                    notifications = notified.plan
                    problems += notified.problems
                }
                fileProvider = try await FileProvider<SettingsYAMLSnapshot>(filePath: FilePath(path))
            } catch let error as Invalid {
                problems += error.problems
            } catch {
                problems.append("\(path): \(error)")
            }
        }
        let stripped = Dictionary(
            uniqueKeysWithValues: environment.compactMap { name, value in
                name.hasPrefix("TRELLIS_") ? (String(name.dropFirst("TRELLIS_".count)), value) : nil
            })
        let sources: [(any ConfigProvider, Source)] =
            [
                (
                    InMemoryProvider(
                        name: "flags",
                        values: Dictionary(
                            uniqueKeysWithValues: flags.map {
                                (
                                    AbsoluteConfigKey($0.key.split(separator: ".").map(String.init)),
                                    ConfigValue($0.value, isSecret: false)
                                )
                            })), .flag
                ),
                (EnvironmentVariablesProvider(environmentVariables: stripped), .environment)
            ] + (fileProvider.map { [($0, Source.file)] } ?? [])

        var configuration = EffectiveConfiguration(file: path)
        configuration.bridges = bridges
        configuration.notifications = notifications
        for setting in SettingKey.all {
            var resolved: (ConfigContent, Source) = (setting.defaultValue, .default)
            for (provider, source) in sources {
                do {
                    if let value = try provider.value(
                        forKey: AbsoluteConfigKey(setting.key.split(separator: ".").map(String.init)),
                        type: setting.kind.configType
                    ).value {
                        resolved = (value.content, source)
                        break
                    }
                } catch {
                    problems.append(
                        "\(setting.key) (from \(describe(source, setting: setting, file: path))) must be \(setting.kind.name)"
                    )
                    break
                }
            }
            if let allowed = setting.check(resolved.0) {
                problems.append(
                    "\(setting.key) = \(shown(setting.key, resolved.0)) (from \(describe(resolved.1, setting: setting, file: path))) is not allowed: use \(allowed)"
                )
            }
            configuration.values[setting.key] = resolved
        }
        if problems.isEmpty {
            problems += configuration.brokerProblems()
            problems += BridgeConfiguration.forgeries(bridges, prefixes: configuration.relaySettings.topicPrefixes)
            problems += BridgeConfiguration.clientIDClashes(bridges)
        }
        if problems.isEmpty, !configuration.string("broker.share_group").isEmpty {
            problems += BridgeConfiguration.groupEchoes(bridges, prefixes: configuration.relaySettings.topicPrefixes)
        }
        guard problems.isEmpty else { throw Invalid(problems: problems) }
        return configuration
    }

    /// The configuration every command reads, as `trellis run` reads it: `file` (else
    /// `trellis.yaml` when present), then `TRELLIS_…` variables, then `flags`. An invalid one is
    /// reported on standard error, each problem on its line, and ends the command with exit code 1.
    ///
    /// - Parameter refusal: what the report begins with.
    package static func forCommand(
        file: String?, flags: [String: ConfigContent] = [:],
        refusal: String = "the configuration is not valid"
    ) async throws(CommandFailure) -> EffectiveConfiguration {
        do {
            return try await load(file: file, flags: flags)
        } catch {
            throw fail("\(refusal):\n" + error.problems.map { "  - \($0)" }.joined(separator: "\n"))
        }
    }

    /// Keys of the YAML file that no setting has (the `bridges:` section is read on its own).
    package static func unknownKeys(of root: Node?, in path: String) throws -> [String] {
        guard let node = root else { return [] }
        guard case .mapping = node else {
            throw Invalid(problems: ["\(path) must be a mapping of keys, such as `spam:` with `limit: 15` below it"])
        }
        var unknown: [String] = []
        func walk(_ node: Node, _ prefix: String) {
            guard case let .mapping(mapping) = node else {
                if SettingKey.byKey[prefix] == nil { unknown.append(prefix) }
                return
            }
            for (key, value) in mapping {
                let name = key.string ?? "?"
                if prefix.isEmpty && [BridgeConfiguration.key, NotificationConfiguration.key].contains(name) {
                    continue
                }
                walk(value, prefix.isEmpty ? name : "\(prefix).\(name)")
            }
        }
        walk(node, "")
        return unknown.map {
            "unknown key \($0) in \(path); every key is listed by `trellis config --help` and in trellis.example.yaml"
        }
    }

    /// The YAML file's root node; nil for an empty file.
    static func fileNode(_ path: String) throws(Invalid) -> Node? {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Invalid(problems: ["cannot read the configuration file \(path)"])
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw Invalid(problems: ["\(path) is not UTF-8 text: a configuration file is YAML written in UTF-8"])
        }
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch {
            throw Invalid(problems: ["\(path) is not valid YAML: \(error)"])
        }
        return node
    }

    package static func describe(_ source: Source, setting: SettingKey, file: String?) -> String {
        switch source {
        case .flag: "a flag"
        case .environment: setting.environmentName
        case .file: file ?? "the file"
        case .default: "the default"
        }
    }

    package static func render(_ content: ConfigContent) -> String {
        switch content {
        case let .string(value): value.isEmpty ? "\"\"" : value
        case let .int(value): String(value)
        case let .double(value): value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : String(value)
        case let .bool(value): String(value)
        default: "\(content)"
        }
    }

    /// `render`, with the user info of a broker address masked: what `config check`, reload logs
    /// and `trellis/events` show, so no password leaves the configuration.
    package static func shown(_ key: String, _ content: ConfigContent) -> String {
        guard case let .string(value) = content else { return render(content) }
        switch key {
        case "broker.address": return render(.string(BrokerURL.masked(value)))
        case "state.store": return render(.string((try? PostgresURL(value))?.description ?? value))
        default: return render(content)
        }
    }

    package func string(_ key: String) -> String {
        if case let .string(value)? = values[key]?.content { return value }
        return ""
    }

    /// This configuration as a reload leaves it in force over `running`: the settings a reload does
    /// not change (``SettingKey/reloadable`` false) at their running values. The checks between keys
    /// (``brokerProblems()``) must hold for it, not only for the file.
    package func inForce(over running: EffectiveConfiguration) -> EffectiveConfiguration {
        var kept = self
        for setting in SettingKey.all where !setting.reloadable {
            kept.values[setting.key] = running.values[setting.key]
        }
        return kept
    }

    package func int(_ key: String) -> Int {
        if case let .int(value)? = values[key]?.content { return value }
        return 0
    }

    package func double(_ key: String) -> Double {
        switch values[key]?.content {
        case let .double(value)?: value
        case let .int(value)?: Double(value)
        default: 0
        }
    }

    package func bool(_ key: String) -> Bool {
        if case let .bool(value)? = values[key]?.content { return value }
        return false
    }

    package func source(_ key: String) -> Source { values[key]?.source ?? .default }

    /// The MQTT client id the settings name: `broker.client_id`; in a share group without it, the
    /// broker user name (each relay of a group logging in with its own). Nil when they name none:
    /// `trellis run` then uses the one kept in the state directory (``ClientIDFile``), as a
    /// well-known id lets any client that may connect take Trellis's connection.
    package var namedClientID: String? {
        let named = string("broker.client_id")
        if !named.isEmpty { return named }
        guard !string("broker.share_group").isEmpty else { return nil }
        let username = string("broker.username")
        return username.isEmpty ? brokerURL?.username : username
    }

    /// The relay's settings from this configuration, with the client id it names (else the
    /// default's, which `trellis run` replaces with the one it keeps).
    package var relaySettings: RelaySettings {
        var settings = RelaySettings()
        settings.hostName = string("plant.host_name")
        settings.plantPrefix = string("plant.prefix")
        settings.plantDialect = PlantDialect(rawValue: string("plant.dialect")) ?? .original
        settings.maxPlants = int("plant.max_plants")
        settings.maxPlantNameLength = int("plant.max_name_length")
        settings.buttonPrefix = string("buttons.prefix")
        settings.historyLimit = int("buttons.history_limit")
        settings.spamLimit = int("spam.limit")
        settings.spamWindow = double("spam.window")
        settings.maxRegistrationsPerClient = int("limits.registrations_per_client")
        settings.requestRate = RateLimit(
            rate: double("limits.requests_per_second"), burst: int("limits.requests_burst"))
        settings.deviceMessageRate = RateLimit(
            rate: double("limits.device_messages_per_second"), burst: int("limits.device_messages_burst"))
        settings.deadLettersPerClient = int("limits.dead_letters_per_client")
        settings.deadLetterPageBytes = int("limits.dead_letter_page_bytes")
        settings.maxDevices = int("devices.max_devices")
        settings.deviceLogLimit = int("devices.log_limit")
        settings.maxCodeBytes = int("devices.max_code_bytes")
        settings.operators = Set(
            string("devices.operators").split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        settings.restrictResponseTopics = bool("security.restrict_response_topics")
        settings.statsInterval = double("stats.interval")
        if string("state.store").isEmpty {
            let backups = string("state.backup.dir")
            settings.backupDirectory =
                backups.isEmpty ? (string("state.dir") as NSString).appendingPathComponent("backups") : backups
        }
        settings.backupInterval = double("state.backup.interval")
        settings.backupKeep = int("state.backup.keep")
        settings.backupRequestInterval = double("state.backup.request_interval")
        settings.backupRequestKeep = int("state.backup.request_keep")
        settings.historyRetention = HistoryRetention(
            rawDays: int("history.raw_days"), hourlyDays: int("history.hourly_days"),
            maxRowsPerSensor: int("history.max_rows_per_sensor"))
        settings.historyCompactionInterval = Double(int("history.compact_every"))
        settings.maxFutureSkew = double("clock.max_future_skew")
        settings.homeAssistantEnabled = bool("homeassistant.enabled")
        settings.discoveryPrefix = string("homeassistant.discovery_prefix")
        let group = string("broker.share_group")
        settings.shareGroup = group.isEmpty ? nil : group
        if let id = namedClientID { settings.clientID = id }
        settings.bridges = bridges
        settings.notifications = notifications
        return settings
    }

    /// The settings whose values differ from `other`, as `key: old → new`.
    package func changes(from other: EffectiveConfiguration) -> [(key: String, old: String, new: String)] {
        SettingKey.all.compactMap { setting in
            let old = other.values[setting.key]?.content
            let new = values[setting.key]?.content
            guard old.map(Self.render) != new.map(Self.render) else { return nil }
            return (
                setting.key, old.map { Self.shown(setting.key, $0) } ?? "",
                new.map { Self.shown(setting.key, $0) } ?? ""
            )
        }
    }
}
