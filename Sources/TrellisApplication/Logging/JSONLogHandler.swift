import Foundation
import Logging
import TrellisCore

/// A swift-log handler writing one JSON object per line to standard error, for log collectors:
/// `{"time","level","label","message", ...metadata}`.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    private let label: String

    public init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var object: [String: Any] = [
            "time": ISO8601Time.format(Date()),
            "level": event.level.rawValue,
            "label": label,
            "message": event.message.description
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            object[key] = value.description
        }
        guard
            var line = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return }
        line.append(0x0A)
        FileHandle.standardError.write(line)
    }
}
