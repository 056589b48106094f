import Foundation
import Metrics
import Synchronization

/// The relay's running figures: what it received and published per service, its replies by
/// operation or error tag, dead letters by reason, reconnects and handler latency. They feed
/// `trellis/stats`, and each is also recorded through swift-metrics (`trellis_…` counters and a
/// handler-duration timer), which the `--metrics` endpoint exports.
public final class RelayCounters: Sendable {
    /// A consistent copy of every figure.
    public struct Snapshot: Sendable, Equatable, Encodable {
        public var received: [String: Int] = [:]
        public var published: [String: Int] = [:]
        public var replies: [String: Int] = [:]
        public var deadLetters: [String: Int] = [:]
        public var reconnects = 0
        /// Messages the broker sent again after Trellis had handled them, dropped.
        public var redeliveries = 0
        public var handlerLatencyP50Microseconds = 0
        public var handlerLatencyP99Microseconds = 0

        enum CodingKeys: String, CodingKey {
            case received, published, replies, reconnects, redeliveries
            case deadLetters = "dead_letters"
            case handlerLatencyP50Microseconds = "handler_latency_p50_us"
            case handlerLatencyP99Microseconds = "handler_latency_p99_us"
        }
    }

    /// The figures kept per label value, each also a swift-metrics counter with one dimension.
    private enum Figure {
        case received, published, reply, deadLetter

        var label: String {
            switch self {
            case .received: "trellis_messages_received_total"
            case .published: "trellis_messages_published_total"
            case .reply: "trellis_replies_total"
            case .deadLetter: "trellis_dead_letters_total"
            }
        }

        var dimension: String {
            switch self {
            case .received, .published: "service"
            case .reply: "operation"
            case .deadLetter: "reason"
            }
        }
    }

    private struct CounterKey: Hashable {
        let figure: Figure
        let value: String
    }

    private struct State {
        var snapshot = Snapshot()
        /// The latest handler latencies, a ring of fixed size so memory stays flat.
        var latencies = [Int](repeating: 0, count: 1024)
        var latencyCount = 0
        /// swift-metrics handles, made once per figure and label value.
        var counters: [CounterKey: Counter] = [:]

        /// Adds one to `figure` for `value`, and returns its swift-metrics counter to increment.
        mutating func bump(_ figure: Figure, _ value: String) -> Counter {
            switch figure {
            case .received: snapshot.received[value, default: 0] += 1
            case .published: snapshot.published[value, default: 0] += 1
            case .reply: snapshot.replies[value, default: 0] += 1
            case .deadLetter: snapshot.deadLetters[value, default: 0] += 1
            }
            let key = CounterKey(figure: figure, value: value)
            if let counter = counters[key] { return counter }
            let counter = Counter(label: figure.label, dimensions: [(figure.dimension, value)])
            counters[key] = counter
            return counter
        }
    }

    private let state = Mutex(State())
    private let handlerTimer = Metrics.Timer(label: "trellis_handler_duration_seconds")
    private let reconnects = Counter(label: "trellis_broker_reconnects_total")
    private let redeliveries = Counter(label: "trellis_redeliveries_dropped_total")

    public init() {}

    /// A message arrived for `service`.
    public func received(service: String) {
        state.withLock { $0.bump(.received, service) }.increment()
    }

    /// Trellis published a message for `service`; `reply` names a plant operation or error tag.
    public func published(service: String, reply: String?) {
        let (published, replied) = state.withLock { state in
            (state.bump(.published, service), reply.map { state.bump(.reply, $0) })
        }
        published.increment()
        replied?.increment()
    }

    /// A message was rejected for `reason`.
    public func deadLetter(reason: String) {
        state.withLock { $0.bump(.deadLetter, reason) }.increment()
    }

    /// The broker connection came back after a loss.
    public func reconnected() {
        state.withLock { $0.snapshot.reconnects += 1 }
        reconnects.increment()
    }

    /// The broker sent a message again that Trellis had already handled; it was dropped.
    public func redelivered() {
        state.withLock { $0.snapshot.redeliveries += 1 }
        redeliveries.increment()
    }

    /// One handler run took `duration`.
    public func handled(in duration: Duration) {
        handlerTimer.recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
        let micros = Int(duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000)
        state.withLock { state in
            state.latencies[state.latencyCount % state.latencies.count] = micros
            state.latencyCount += 1
        }
    }

    /// Every figure now, with latency percentiles over the latest 1,024 messages.
    public func snapshot() -> Snapshot {
        state.withLock { state in
            var snapshot = state.snapshot
            let samples = Array(state.latencies.prefix(min(state.latencyCount, state.latencies.count))).sorted()
            if !samples.isEmpty {
                snapshot.handlerLatencyP50Microseconds = samples[samples.count / 2]
                snapshot.handlerLatencyP99Microseconds = samples[min(samples.count - 1, samples.count * 99 / 100)]
            }
            return snapshot
        }
    }
}
