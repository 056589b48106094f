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
    private let localRefusals: Counter
    private let bridge: String
    private let queuedMessages: Gauge
    private let queuedBytes: Gauge
    private let oldestAge: Gauge
    private let unacknowledged: Gauge
    private let drops = Mutex(Drops())
    /// Each rule's figures, made as rules are first seen (those of the settings at once).
    private let rules = Mutex([String: RuleMetrics]())

    /// What is recorded of one `out` rule, named by its topic filter.
    private struct RuleMetrics {
        let droppedByAge: Counter
        let droppedByBytes: Counter
        let queuedMessages: Gauge
        let queuedBytes: Gauge

        init(bridge: String, rule: String) {
            let named = [("bridge", bridge), ("rule", rule)]
            droppedByAge = Counter(label: "trellis_bridge_dropped_total", dimensions: named + [("bound", "age")])
            droppedByBytes = Counter(label: "trellis_bridge_dropped_total", dimensions: named + [("bound", "bytes")])
            queuedMessages = Gauge(label: "trellis_bridge_rule_queued_messages", dimensions: named)
            queuedBytes = Gauge(label: "trellis_bridge_rule_queued_bytes", dimensions: named)
        }
    }

    /// Dropped messages not yet logged, by rule, and when the last line was written.
    private struct Drops {
        var throttle = NoticeThrottle()
        var byRule: [String: Dropped] = [:]
    }

    /// Messages a trim dropped, by bound.
    public struct Dropped: Sendable, Equatable {
        public var byAge = 0, byBytes = 0

        public init(byAge: Int = 0, byBytes: Int = 0) {
            (self.byAge, self.byBytes) = (byAge, byBytes)
        }
    }

    /// What a log line says of the drops since the last: the totals, and each rule's part.
    public struct DropNotice: Sendable, Equatable {
        public var total: Dropped
        public var byRule: [String: Dropped]

        /// The rules' parts in words, for the line: `sensors/#: 12 by age, 3 by bytes; …`.
        public var description: String {
            byRule.sorted { $0.key < $1.key }.map { rule, dropped in
                "\(rule.isEmpty ? "(before rules were counted)" : rule): \(dropped.byAge) by age, \(dropped.byBytes) by bytes"
            }.joined(separator: "; ")
        }
    }

    /// - Parameters:
    ///   - rules: the topic filters of the bridge's `out` rules, whose figures start at 0.
    public init(bridge: String, rules: [String] = []) {
        self.bridge = bridge
        let named = [("bridge", bridge)]
        forwarded = Counter(label: "trellis_bridge_forwarded_total", dimensions: named)
        carriedIn = Counter(label: "trellis_bridge_carried_in_total", dimensions: named)
        refusals = Counter(label: "trellis_bridge_refused_total", dimensions: named)
        copies = Counter(label: "trellis_bridge_arrivals_dropped_total", dimensions: named + [("reason", "copy")])
        loops = Counter(label: "trellis_bridge_arrivals_dropped_total", dimensions: named + [("reason", "loop")])
        localRefusals = Counter(
            label: "trellis_bridge_arrivals_dropped_total", dimensions: named + [("reason", "refused")])
        queuedMessages = Gauge(label: "trellis_bridge_queued_messages", dimensions: named)
        queuedBytes = Gauge(label: "trellis_bridge_queued_bytes", dimensions: named)
        oldestAge = Gauge(label: "trellis_bridge_queue_oldest_age_seconds", dimensions: named)
        unacknowledged = Gauge(label: "trellis_bridge_unacknowledged_messages", dimensions: named)
        self.rules.withLock { metrics in
            for rule in rules { metrics[rule] = RuleMetrics(bridge: bridge, rule: rule) }
        }
    }

    /// The figures of `rule`, made when it is first seen.
    private func metrics(of rule: String) -> RuleMetrics {
        rules.withLock { metrics in
            if let known = metrics[rule] { return known }
            let made = RuleMetrics(bridge: bridge, rule: rule)
            metrics[rule] = made
            return made
        }
    }

    /// Records how long the oldest message waiting was kept before `now` (0 when none waits): a
    /// queue that ages while messages arrive is a link that does not drain.
    public func oldest(_ kept: Date?, at now: Date) {
        oldestAge.record(kept.map { max(0, now.timeIntervalSince($0)) } ?? 0)
    }

    /// How many messages are sent upstream and not yet acknowledged: at most the bridge's window. A
    /// figure that stays above 0 while the link is up and nothing new is kept is a window waiting for
    /// acknowledgements that do not come.
    public func unacknowledged(_ count: Int) { unacknowledged.record(count) }

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

    /// A message from the upstream broker that the local broker refused, or the client could never
    /// publish there (too large for it, a topic it refuses), dropped at `now` so that the messages
    /// after it are carried; the number refused before it since the last line when a line is to be
    /// logged, nil when not (at most a line a minute).
    public func refusedLocally(at now: Date) -> Int? {
        localRefusals.increment()
        return refusalLog.withLock { $0.notice("refused", at: now) }
    }

    /// A message from the upstream broker dropped: a copy of one carried lately, or one of this
    /// relay's own come back around a loop.
    public func dropped(_ arrival: BridgeArrival) {
        switch arrival {
        case .copy: copies.increment()
        case .loop: loops.increment()
        case .carry: break
        }
    }

    /// Records a trim of the queue at `now`; returns what to log (the drops since the last line, in
    /// all and by rule), or nil when there is nothing to say or a line was written less than a
    /// minute ago (the drops wait for the next).
    public func trimmed(_ trim: ForwardTrim, at now: Date) -> DropNotice? {
        queuedMessages.record(trim.messages)
        queuedBytes.record(trim.bytes)
        let known = rules.withLock { Array($0.keys) }
        for rule in Set(known).union(trim.rules.keys) {
            let part = trim.rules[rule] ?? ForwardTrim.Rule()
            let metrics = metrics(of: rule)
            metrics.queuedMessages.record(part.left.messages)
            metrics.queuedBytes.record(part.left.bytes)
            if part.byAge > 0 { metrics.droppedByAge.increment(by: part.byAge) }
            if part.byBytes > 0 { metrics.droppedByBytes.increment(by: part.byBytes) }
        }
        return drops.withLock { drops in
            for (rule, part) in trim.rules where part.byAge + part.byBytes > 0 {
                drops.byRule[rule, default: Dropped()].byAge += part.byAge
                drops.byRule[rule, default: Dropped()].byBytes += part.byBytes
            }
            guard !drops.byRule.isEmpty, drops.throttle.notice("drops", at: now) != nil else { return nil }
            defer { drops.byRule = [:] }
            let total = drops.byRule.values.reduce(Dropped()) {
                Dropped(byAge: $0.byAge + $1.byAge, byBytes: $0.byBytes + $1.byBytes)
            }
            return DropNotice(total: total, byRule: drops.byRule)
        }
    }
}
