import TrellisCore

/// A fire-and-forget write waiting in the ``WriteBehindBuffer``.
package indirect enum BufferedWrite: Sendable {
    /// A sensor's reading, kept unless a newer one is stored.
    case reading(sensor: String, moisture: Int, temperature: Double, at: Int64)
    /// A dead letter, counted against `client`, of whose letters the newest `quota` are kept.
    case deadLetter(reason: String, topic: String, payload: [UInt8], at: Int64, client: String, quota: Int)
    /// A write made while handling a delivery, committed in the same batch as the delivery's mark.
    case marked(BufferedWrite, DeliveryMark)
    /// A device's log entry, keeping the newest `limit` of that device.
    case deviceLog(device: String, at: Int64, type: String, message: String, limit: Int)
    /// A message an `out` rule of `bridge` took, kept in its queue under its upstream topic.
    case forward(bridge: String, rule: String, topic: String, payload: [UInt8], qos: Int, retain: Bool, at: Int64)
    /// The id of a message a receiver of `bridge` carried in; with `forgettingPast`, the bridge's
    /// ids older than its newest that many are deleted after it.
    case carriedIn(bridge: String, origin: String, sequence: Int64, forgettingPast: Int?)
    /// A health probe: 4 KiB of fresh random bytes in the one row of `store_probe`, so its commit
    /// must write pages as a real change does.
    case probe(at: Int64)
}

extension BufferedWrite {
    /// Whether committing this write can change an answer the read caches keep: only a reading
    /// does (the sensor records). Log lines, dead letters, a bridge's queue and ids, delivery marks and probes are read by
    /// no cached query, so a batch of them leaves the caches as they are; emptying them after
    /// every batch made each log line's device lookup a database read.
    package var changesCachedReads: Bool {
        switch self {
        case .reading: true
        case let .marked(inner, _): inner.changesCachedReads
        case .deadLetter, .deviceLog, .forward, .carriedIn, .probe: false
        }
    }

    /// The bridge whose queue this write keeps a message in (a delivery's mark around it or not); nil for any other.
    package var forwardBridge: String? {
        switch self {
        case let .forward(bridge, _, _, _, _, _, _): bridge
        case let .marked(inner, _): inner.forwardBridge
        case .reading, .deadLetter, .deviceLog, .carriedIn, .probe: nil
        }
    }
}
