import Foundation
import Logging
import Metrics
import TrellisCore
import TrellisStore

/// Compacts the history of readings at start and every ``RelaySettings/historyCompactionInterval`` seconds
/// (`history.compact_every`),
/// as ``RelaySettings/historyRetention`` says (read again before each run, so a reload applies):
/// one store operation on a task of its own, so the message loop goes on while it runs. What each
/// run folded, expired and dropped is counted (`trellis_history_rows_total{outcome}`) and logged
/// when anything was dropped for the per-sensor cap.
public enum HistoryService {
    /// The compaction of `relay`'s store, as a service of the group.
    public static func service(relay: RelayService, logger: Logger) -> PeriodicService {
        PeriodicService(interval: { relay.engine.settings.historyCompactionInterval }) {
            let engine = relay.engine
            await compact(store: engine.store, retention: engine.settings.historyRetention, logger: logger)
        }
    }

    /// One compaction, counted and logged; a failure is logged and left to the next run.
    @discardableResult
    static func compact(store: any TrellisStore, retention: HistoryRetention, logger: Logger) async
        -> HistoryCompaction?
    {
        do {
            let started = ContinuousClock.now
            let outcome = try await store.compactHistory(retention, now: Date())
            if outcome.folded + outcome.expired + outcome.dropped > 0 {
                let elapsed = ContinuousClock.now - started
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                logger.info(
                    "compacted the history",
                    metadata: [
                        "folded": "\(outcome.folded)", "expired": "\(outcome.expired)", "dropped": "\(outcome.dropped)",
                        "seconds": "\(String(format: "%.3f", seconds))"
                    ])
            }
            for (name, rows) in [("folded", outcome.folded), ("expired", outcome.expired), ("dropped", outcome.dropped)]
            where rows > 0 {
                Counter(label: "trellis_history_rows_total", dimensions: [("outcome", name)]).increment(by: rows)
            }
            if outcome.dropped > 0 {
                logger.warning(
                    "dropped the oldest history of sensors over history.max_rows_per_sensor",
                    metadata: ["rows": "\(outcome.dropped)", "cap": "\(retention.maxRowsPerSensor)"])
            }
            return outcome
        } catch {
            logger.error("could not compact the history of readings", metadata: ["error": "\(error)"])
            return nil
        }
    }
}
