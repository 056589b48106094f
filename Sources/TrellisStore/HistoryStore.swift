import Foundation
import TrellisCore

/// The history of readings: every reading as it came for ``HistoryRetention/rawDays``, then its
/// hour's minimum / mean / maximum / count for ``HistoryRetention/hourlyDays``.
///
/// A reading enters the history in the same write that keeps it as its sensor's latest
/// (``PlantStore/recordReading(sensor:moisture:temperature:at:)``): as a raw row naming the plant
/// its sensor belongs to (the first added, if several), or, when its hour was folded already, into
/// that hour's row, by the database in one statement.
public protocol HistoryStore: Sendable {
    /// Folds raw readings older than the raw retention into their hours, deletes hours older than
    /// the hourly retention, and drops each sensor's oldest rows beyond
    /// ``HistoryRetention/maxRowsPerSensor`` (raw and hourly each), in one transaction.
    func compactHistory(_ retention: HistoryRetention, now: Date) async throws -> HistoryCompaction

    /// The points of `subject`'s readings as `plan` says, oldest first (buckets without a reading
    /// are left out); nil when a plant is asked for and none has that name.
    func history(of subject: HistorySubject, plan: HistoryPlan) async throws -> [HistoryPoint]?
}
