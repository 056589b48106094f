import Synchronization
import TrellisCore

/// Answers to the store's most frequent reads, kept in memory until the next committed write that
/// can change them (every direct write; of the writes made behind, readings), so a burst of the
/// same requests between two writes costs one query, and the relay (which handles
/// messages on the MQTT network thread) answers them without waiting for a reader thread.
///
/// A read remembers the generation it started at and keeps its result only if no write committed
/// in between, so the cache never holds data older than the database. It holds at most
/// `capacity` answers and starts over when full, so hostile keys cannot grow it.
///
/// The SQLite store's two caches, read on every plant request and device message, get copies of
/// `lookup` and `keep` specialized for their types (`@_specialize`): the stores are other modules,
/// which otherwise call the generic code, whose dictionary lookups ask the runtime for type
/// metadata at every call (about 3% of a plant request's CPU).
package final class CommittedReadCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var answers: [Key: Value] = [:]
        /// The answer found or kept last, with its key: the same request usually follows itself,
        /// and comparing a key costs a fraction of hashing it. Always one of `answers`.
        var last: (key: Key, answer: Value)?
    }

    private let state = Mutex(State())
    private let capacity: Int

    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The answer kept for `key` (nil when it must be read) and the generation a read made now
    /// belongs to.
    @_specialize(exported:true,where Key == String?, Value == [PlantSensorRecord]?)
    @_specialize(exported:true,where Key == String, Value == DeviceRecord)
    package func lookup(_ key: Key) -> (generation: UInt64, answer: Value?) {
        // The lock's closure returns a concrete type: unspecialized, a tuple holding a generic
        // answer made the runtime look its metadata up at every call.
        var answer: Value?
        let generation = state.withLock { state in
            if let last = state.last, last.key == key {
                answer = last.answer
            } else {
                answer = state.answers[key]
                if let answer { state.last = (key, answer) }
            }
            return state.generation
        }
        return (generation, answer)
    }

    /// Keeps `answer` for `key`, read at `generation`, unless a write committed since.
    @_specialize(exported:true,where Key == String?, Value == [PlantSensorRecord]?)
    @_specialize(exported:true,where Key == String, Value == DeviceRecord)
    package func keep(_ answer: Value, for key: Key, readAt generation: UInt64) {
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.answers.count >= capacity, state.answers[key] == nil {
                state.answers.removeAll(keepingCapacity: true)
            }
            state.answers[key] = answer
            state.last = (key, answer)
        }
    }

    /// Called after a committed write that can change these answers: what was kept may be out of date.
    package func invalidate() {
        state.withLock { state in
            state.generation &+= 1
            state.answers.removeAll(keepingCapacity: true)
            state.last = nil
        }
    }
}

/// The store's read caches, emptied together after every committed write that can change them.
package struct StoreReadCaches: Sendable {
    /// Answers of `sensorRecords(plant:)` (nil: every plant).
    package let sensors = CommittedReadCache<String?, [PlantSensorRecord]?>(capacity: 1024)
    /// Devices looked up by id.
    package let devices = CommittedReadCache<String, DeviceRecord>(capacity: 10_000)

    package init() {}

    /// Called after every direct write and every batch written behind that holds a reading
    /// (``BufferedWrite/changesCachedReads``): log lines, dead letters and delivery marks change no
    /// cached answer.
    package func invalidate() {
        sensors.invalidate()
        devices.invalidate()
    }
}
