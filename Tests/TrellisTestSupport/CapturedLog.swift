import Logging
import Synchronization

/// Log lines kept by a test, with their levels and metadata, to check what was said and how often.
public final class CapturedLog: Sendable {
    public init() {}
    public let lines = Mutex<[(level: Logger.Level, text: String)]>([])

    public var logger: Logger {
        Logger(label: "test") { _ in Handler(log: self) }
    }

    /// How many lines of `level` contain `text`.
    public func count(_ level: Logger.Level, containing text: String) -> Int {
        lines.withLock { $0.filter { $0.level == level && $0.text.contains(text) }.count }
    }

    /// Whether any line, of any level, contains `text`.
    public func contains(_ text: String) -> Bool {
        lines.withLock { $0.contains { $0.text.contains(text) } }
    }

    struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let extra = self.metadata.merging(event.metadata ?? [:]) { $1 }.sorted { $0.key < $1.key }.map {
                "\($0.key)=\($0.value)"
            }.joined(separator: " ")
            log.lines.withLock { $0.append((event.level, "\(event.message) \(extra)")) }
        }
    }
}
