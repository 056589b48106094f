import TrellisCore
import TrellisStore
/// The PostgreSQL store's answers to the plant tracker's reads, kept across messages while the
/// plant tables do not change, so a burst of the same request between two changes reads once.
///
/// Each answer is tagged with the `plants` version (``PostgresSchema/batching``) read in the same
/// statement as its rows, so it holds every change up to that version. A message may take it when
/// its own handling saw no newer version (``ObservedVersions``): the spam admission of a plant
/// request reads the version in its round trip, after the request arrived, so the answer then holds
/// every change committed before the request, whichever relay made it. Changes committed by this
/// store that can change an answer (every direct write, readings written behind) end every answer
/// kept (``CommittedReadCache``'s generations), so this relay's own writes are seen by its next
/// read without waiting for the version.
struct PostgresReadCache: Sendable {
    /// The data kind whose version tags these answers.
    static let plantsVersion = "plants"

    /// An answer and the version it was read at.
    struct Tagged<Value: Sendable>: Sendable {
        var version: Int64
        var value: Value
    }

    /// Answers of `plants()`.
    let plants = CommittedReadCache<Bool, Tagged<[StoredPlant]>>(capacity: 1)
    /// Answers of `sensorRecords(plant:)` (nil: every plant).
    let sensors = CommittedReadCache<String?, Tagged<[PlantSensorRecord]?>>(capacity: 256)

    /// Called after every direct write this store commits (or may have committed), and every batch
    /// written behind that holds a reading.
    func invalidate() {
        plants.invalidate()
        sensors.invalidate()
    }

    /// The answer kept for `key`, if the message in hand may take it, and the generation a read
    /// made now belongs to.
    static func lookup<Key, Value>(_ key: Key, in cache: CommittedReadCache<Key, Tagged<Value>>) -> (
        generation: UInt64, answer: Value?
    ) {
        let (generation, kept) = cache.lookup(key)
        guard let kept, let seen = ObservedVersions.current?.version(of: plantsVersion), kept.version >= seen else {
            return (generation, nil)
        }
        return (generation, kept.value)
    }
}
