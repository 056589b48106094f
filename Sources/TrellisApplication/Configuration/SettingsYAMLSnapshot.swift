import Configuration
import Foundation
import Yams

/// The settings of a configuration file, for swift-configuration's providers: the file's YAML
/// without its `bridges:` and `notifications:` sections, whose lists of mappings the library's YAML snapshot does not take
/// (``BridgeConfiguration`` and ``NotificationConfiguration`` read them from the file itself). Everything else is read by
/// `YAMLSnapshot`, as before.
package final class SettingsYAMLSnapshot: FileConfigSnapshot, Sendable {
    package typealias ParsingOptions = YAMLSnapshot.ParsingOptions

    private let settings: YAMLSnapshot

    package init(data: RawSpan, providerName: String, parsingOptions: ParsingOptions) throws {
        let text = data.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        var kept = Array(text.utf8)
        if case let .mapping(root)? = try Yams.compose(yaml: text),
            root.contains(where: { Self.ownSections.contains($0.key.string ?? "") })
        {
            let rest = Node.Mapping(root.filter { !Self.ownSections.contains($0.key.string ?? "") })
            kept = Array(try Yams.serialize(node: .mapping(rest)).utf8)
        }
        settings = try YAMLSnapshot(data: kept.span.bytes, providerName: providerName, parsingOptions: parsingOptions)
    }

    /// The sections read from the file on their own.
    static let ownSections: Set<String> = [BridgeConfiguration.key, NotificationConfiguration.key]

    package var providerName: String { settings.providerName }

    package func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try settings.value(forKey: key, type: type)
    }

    package var description: String { settings.description }
    package var debugDescription: String { settings.debugDescription }
}
