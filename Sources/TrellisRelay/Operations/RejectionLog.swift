import Foundation
import Logging
import Synchronization

/// Logs each rejected message's reason once, then at most one summary line per reason and
/// interval, so a flood of bad input cannot fill the disk.
public final class RejectionLog: Sendable {
    private struct Entry {
        var windowStart: Date
        var suppressed: Int
    }

    private let logger: Logger
    private let interval: TimeInterval
    private let entries = Mutex([String: Entry]())

    public init(logger: Logger, interval: TimeInterval = 10) {
        self.logger = logger
        self.interval = interval
    }

    /// Records a rejection; logs it when its reason has not been logged within the interval.
    public func record(reason: String, topic: String, at now: Date = Date()) {
        let (log, suppressed) = entries.withLock { entries -> (Bool, Int) in
            guard var entry = entries[reason], now.timeIntervalSince(entry.windowStart) < interval else {
                let previous = entries[reason]?.suppressed ?? 0
                entries[reason] = Entry(windowStart: now, suppressed: 0)
                if entries.count > 1024 {
                    entries = entries.filter { now.timeIntervalSince($0.value.windowStart) < interval }
                }
                return (true, previous)
            }
            entry.suppressed += 1
            entries[reason] = entry
            return (false, 0)
        }
        guard log else { return }
        var metadata: Logger.Metadata = ["reason": "\(reason)", "topic": "\(topic)"]
        if suppressed > 0 { metadata["suppressed_since_last"] = "\(suppressed)" }
        logger.notice("rejected message", metadata: metadata)
    }
}
