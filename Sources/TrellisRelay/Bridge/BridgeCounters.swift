import Foundation
import Metrics
import Synchronization
import TrellisCore
import TrellisStore

/// The figures of one bridge, recorded through swift-metrics for `/metrics`, and the rule for
/// logging what its queue's bounds dropped: never silently, at most a line a minute.
public final class BridgeCounters: Sendable {
    private let forwarded: Counter
    private let carriedIn: Counter
    private let refusals: Counter
    private let refusalLog = Mutex(NoticeThrottle())
    private let copies: Counter
    private let loops: Counter
    private let droppedByAge: Counter
    private let droppedByBytes: Counter
    private let queuedMessages: Gauge
    private let queuedBytes: Gauge
    private let oldestAge: Gauge
    private let drops = Mutex(Drops())

    /// Dropped messages not yet logged, and when the last line was written.
    private struct Drops {
        var throttle = NoticeThrottle()
        var byAge = 0
        var byBytes = 0
    }

    public init(bridge: String) {
        let named = [("bridge", bridge)]
        forwarded = Counter(label: "trellis_bridge_forwarded_total", dimensions: named)
        carriedIn = Counter(label: "trellis_bridge_carried_in_total", dimensions: named)
        refusals = Counter(label: "trellis_bridge_refused_total", dimensions: named)
        copies = Counter(label: "trellis_bridge_arrivals_dropped_total", dimensions: named + [("reason", "copy")])
        loops = Counter(label: "trellis_bridge_arrivals_dropped_total", dimensions: named + [("reason", "loop")])
        droppedByAge = Counter(label: "trellis_bridge_dropped_total", dimensions: named + [("bound", "age")])
        droppedByBytes = Counter(label: "trellis_bridge_dropped_total", dimensions: named + [("bound", "bytes")])
        queuedMessages = Gauge(label: "trellis_bridge_queued_messages", dimensions: named)
        queuedBytes = Gauge(label: "trellis_bridge_queued_bytes", dimensions: named)
        oldestAge = Gauge(label: "trellis_bridge_queue_oldest_age_seconds", dimensions: named)
    }

    /// Records how long the oldest message waiting was kept before `now` (0 when none waits): a
    /// queue that ages while messages arrive is a link that does not drain.
    public func oldest(_ kept: Date?, at now: Date) {
        oldestAge.record(kept.map { max(0, now.timeIntervalSince($0)) } ?? 0)
    }

    /// `count` messages the upstream broker acknowledged.
    public func forwarded(_ count: Int) { forwarded.increment(by: count) }

    /// A message sent up that the upstream broker or the client refused, dropped at `now`; the number
    /// refused before it since the last line when a line is to be logged, nil when not (at most a
    /// line a minute).
    public func refused(at now: Date) -> Int? {
        refusals.increment()
        return refusalLog.withLock { $0.notice("refused", at: now) }
    }

    /// A message carried in and acknowledged by the local broker.
    public func carried() { carriedIn.increment() }

    /// A message from the upstream broker dropped: a copy of one carried lately, or one of this
    /// relay's own come back around a loop.
    public func dropped(_ arrival: BridgeArrival) {
        switch arrival {
        case .copy: copies.increment()
        case .loop: loops.increment()
        case .carry: break
        }
    }

    /// Records a trim of the queue at `now`; returns the line to log (the drops since the last
    /// line, by bound), or nil when there is nothing to say or a line was written less than a
    /// minute ago (the drops wait for the next).
    public func trimmed(_ trim: ForwardTrim, at now: Date) -> (byAge: Int, byBytes: Int)? {
        queuedMessages.record(trim.messages)
        queuedBytes.record(trim.bytes)
        if trim.byAge > 0 { droppedByAge.increment(by: trim.byAge) }
        if trim.byBytes > 0 { droppedByBytes.increment(by: trim.byBytes) }
        return drops.withLock { drops in
            drops.byAge += trim.byAge
            drops.byBytes += trim.byBytes
            guard drops.byAge + drops.byBytes > 0, drops.throttle.notice("drops", at: now) != nil else { return nil }
            defer { (drops.byAge, drops.byBytes) = (0, 0) }
            return (drops.byAge, drops.byBytes)
        }
    }
}
