import Logging
import Synchronization
import TrellisRelay

/// Logging for every command: text or JSON lines on standard error, at a level that a reload
/// can change while Trellis runs.
package enum TrellisLogging {
    /// The level every logger consults on each call.
    package static let level = Mutex(Logger.Level.info)

    /// Installs the log handlers once and returns the root logger.
    package static func bootstrap(level name: String, format: String) -> Logger {
        setLevel(name)
        let json = format == "json"
        LoggingSystem.bootstrap { label -> any LogHandler in
            if json { return DynamicLevelHandler(inner: JSONLogHandler(label: label, level: .trace)) }
            return DynamicLevelHandler(inner: StreamLogHandler.standardError(label: label))
        }
        return Logger(label: "trellis")
    }

    /// Changes the level of every logger at once.
    package static func setLevel(_ name: String) {
        let chosen = Logger.Level(rawValue: name) ?? .info
        level.withLock { $0 = chosen }
    }
}

/// Wraps a handler so that its level is the process-wide `TrellisLogging.level`.
struct DynamicLevelHandler<Inner: LogHandler>: LogHandler {
    var inner: Inner

    init(inner: Inner) {
        self.inner = inner
        self.inner.logLevel = .trace
    }

    var logLevel: Logger.Level {
        get { TrellisLogging.level.withLock { $0 } }
        set { TrellisLogging.level.withLock { $0 = newValue } }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        inner.log(event: event)
    }
}
