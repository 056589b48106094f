import TrellisApplication
import ArgumentParser
import Configuration

/// The flags of `trellis run`, which follow from ``SettingKey/all``: a setting with a ``SettingKey/flag``
/// has one `@Option` (or, for a boolean, `@Flag`) in `RunCommand` named after it, whose help is the
/// setting's (``ArgumentHelp/setting(_:valueName:)``), and ``SettingFlags/values(of:)`` reads what was
/// given by the flag's name. So a setting's text, default and key are written once; a test fails when a
/// flag and the table disagree.
extension SettingKey {
    /// The settings that have a flag, by flag name (`spam-limit`).
    static let byFlag: [String: SettingKey] = Dictionary(
        uniqueKeysWithValues: all.compactMap { key in
            key.flag.map { ($0, key) }
        })

    /// The default as the flag's help says it; nil for an empty string (nothing to say).
    var defaultText: String? {
        switch defaultValue {
        case let .string(text): text.isEmpty ? nil : text
        case let .int(number): "\(number)"
        case let .double(number): number == number.rounded() && abs(number) < 1e15 ? "\(Int(number))" : "\(number)"
        case let .bool(flag): flag ? "on" : nil
        default: nil
        }
    }
}

extension ArgumentHelp {
    /// The help of the flag of the setting `key`: its help, its default, and its key in brackets.
    static func setting(_ key: String, valueName: String? = nil) -> ArgumentHelp {
        guard let setting = SettingKey.byKey[key] else { preconditionFailure("no setting \(key)") }
        var text = setting.help
        if !text.hasSuffix(".") { text += "." }
        if let value = setting.defaultText { text += " Default: \(value)." }
        return ArgumentHelp(text + " [\(key)]", valueName: valueName)
    }
}

/// A parsed `@Option` or `@Flag` whose value a setting takes, nil when it was not given.
protocol SettingFlag {
    var settingValue: ConfigContent? { get }
}

/// A type a setting's flag parses into.
protocol SettingFlagValue {
    var content: ConfigContent { get }
}

extension String: SettingFlagValue { var content: ConfigContent { .string(self) } }
extension Int: SettingFlagValue { var content: ConfigContent { .int(self) } }
extension Double: SettingFlagValue { var content: ConfigContent { .double(self) } }

/// An optional value: given or not.
protocol OptionalSettingFlagValue {
    var content: ConfigContent? { get }
}

extension Optional: OptionalSettingFlagValue where Wrapped: SettingFlagValue {
    var content: ConfigContent? { map(\.content) }
}

extension Option: SettingFlag where Value: OptionalSettingFlagValue {
    var settingValue: ConfigContent? { wrappedValue.content }
}

extension Flag: SettingFlag where Value == Bool {
    /// A boolean setting's flag turns it on; absent, the file or the environment decides.
    var settingValue: ConfigContent? { wrappedValue ? .bool(true) : nil }
}

enum SettingFlags {
    /// The settings given as flags in `command`, by configuration key: each `@Option`/`@Flag`
    /// property whose flag name (`spamLimit` → `spam-limit`) is a setting's.
    static func values(of command: some ParsableArguments) -> [String: ConfigContent] {
        var values: [String: ConfigContent] = [:]
        for (name, flag) in flags(of: command) {
            if let setting = SettingKey.byFlag[name], let value = flag.settingValue { values[setting.key] = value }
        }
        return values
    }

    /// Every setting-like flag property of `command`, by flag name.
    static func flags(of command: some ParsableArguments) -> [(name: String, flag: any SettingFlag)] {
        Mirror(reflecting: command).children.compactMap { child in
            guard let label = child.label, label.hasPrefix("_"), let flag = child.value as? any SettingFlag else {
                return nil
            }
            return (flagName(label.dropFirst()), flag)
        }
    }

    /// The long flag name ArgumentParser makes of a property name: `socketioMaxSessions` → `socketio-max-sessions`.
    static func flagName(_ property: Substring) -> String {
        var name = ""
        for character in property {
            if character.isUppercase {
                name += "-" + character.lowercased()
            } else {
                name.append(character)
            }
        }
        return name
    }
}
