import Synchronization

/// The store's in-memory view of `sensorRecords(plant: nil)`, the answer to the plant tracker's
/// most frequent request: kept until the next committed write, so a burst of requests between
/// two readings costs one query.
///
/// A read remembers the generation it started at and keeps its result only if no write
/// committed in between, so the view never holds data older than the database.
final class SensorRecordsView: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var records: [SensorRecord]?
    }

    private let state = Mutex(State())

    /// The view and the generation it belongs to; nil records when it must be read again.
    func snapshot() -> (generation: UInt64, records: [SensorRecord]?) {
        state.withLock { ($0.generation, $0.records) }
    }

    /// Keeps `records`, read at `generation`, unless a write committed since.
    func keep(_ records: [SensorRecord], readAt generation: UInt64) {
        state.withLock { state in
            if state.generation == generation { state.records = records }
        }
    }

    /// Called after every committed write: what was kept may be out of date.
    func invalidate() {
        state.withLock { state in
            state.generation &+= 1
            state.records = nil
        }
    }
}
