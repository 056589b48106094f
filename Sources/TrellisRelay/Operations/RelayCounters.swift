import Foundation
import Metrics
import Synchronization
import TrellisCore
import TrellisMQTTTypes

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

        /// Its place in ``State/recent``.
        var slot: Int {
            switch self {
            case .received: 0
            case .published: 1
            case .reply: 2
            case .deadLetter: 3
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

    /// One figure's count for one label value, with its swift-metrics counter. A class, so the
    /// last one bumped per figure can be kept at hand (``State/recent``) and counted again without
    /// a lookup; its count changes only under the counters' lock.
    private final class Tally {
        let value: String
        /// `value`'s UTF-8 bytes, which a reply's tag is compared with.
        let utf8: [UInt8]
        /// How a plant message tagged `value` ends (`;operation:` and the tag), when the tag has no
        /// `;`: a reply that ends so has this tag, as ``RelayEngine/operationTag(of:)`` finds it.
        let plantMessageEnd: [UInt8]?
        var count = 0
        let counter: Counter

        init(figure: Figure, value: String) {
            self.value = value
            utf8 = Array(value.utf8)
            plantMessageEnd = figure == .reply && !utf8.contains(0x3B) ? RelayEngine.operationMarker + utf8 : nil
            counter = Counter(label: figure.label, dimensions: [(figure.dimension, value)])
        }

        /// Whether `payload` is a plant message tagged `value`, told by its last bytes alone.
        func tags(_ payload: [UInt8]) -> Bool {
            guard let end = plantMessageEnd, payload.count >= end.count + 3,
                payload[0] == 0x49, payload[1] == 0x44, payload[2] == 0x3A // "ID:"
            else { return false }
            return payload.withUnsafeBufferPointer { bytes in
                end.withUnsafeBufferPointer {
                    UnsafeBufferPointer(rebasing: bytes[(bytes.count - end.count)...]).sameBytes(as: $0)
                }
            }
        }

        func bump() {
            count += 1
            counter.increment()
        }
    }

    private struct State {
        /// Every figure per label value: one lookup per message and figure, the swift-metrics
        /// handle made on first use.
        var tallies: [CounterKey: Tally] = [:]
        var reconnects = 0
        var redeliveries = 0
        /// The latest handler latencies, a ring of fixed size so memory stays flat.
        var latencies = [Int](repeating: 0, count: 1024)
        var latencyCount = 0

        /// Per figure, the tally bumped last: one message after another names the same service
        /// and operation, and comparing one string costs a fraction of hashing it. Unretained:
        /// ``tallies`` keeps every tally for the counters' life, and taking a reference to the one at
        /// hand on every message would cost a retain and a release.
        var recent:
            (
                received: Unmanaged<Tally>?, published: Unmanaged<Tally>?, reply: Unmanaged<Tally>?,
                deadLetter: Unmanaged<Tally>?
            )

        /// The tally of `figure` for `value`, made on first use.
        mutating func tally(_ figure: Figure, _ value: String) -> Tally {
            let key = CounterKey(figure: figure, value: value)
            if let tally = tallies[key] { return tally }
            let tally = Tally(figure: figure, value: value)
            tallies[key] = tally
            return tally
        }

        /// Adds one to `figure` for `value`, and to its swift-metrics counter.
        mutating func bump(_ figure: Figure, _ value: String) {
            if let last = recent(figure), last._withUnsafeGuaranteedRef({ $0.value == value }) {
                return last._withUnsafeGuaranteedRef { $0.bump() }
            }
            let tally = tally(figure, value)
            setRecent(figure, .passUnretained(tally))
            tally.bump()
        }

        /// The tally of `figure` bumped last.
        private func recent(_ figure: Figure) -> Unmanaged<Tally>? {
            switch figure {
            case .received: recent.received
            case .published: recent.published
            case .reply: recent.reply
            case .deadLetter: recent.deadLetter
            }
        }

        private mutating func setRecent(_ figure: Figure, _ tally: Unmanaged<Tally>) {
            switch figure {
            case .received: recent.received = tally
            case .published: recent.published = tally
            case .reply: recent.reply = tally
            case .deadLetter: recent.deadLetter = tally
            }
        }

        /// ``bump(_:_:)`` of a reply tag given as UTF-8 bytes, compared with the last tag bumped as
        /// they are; a string is made of them only when they differ.
        mutating func bumpReply(utf8 value: ArraySlice<UInt8>) {
            if let last = recent.reply,
                last._withUnsafeGuaranteedRef({ last in
                    value.withUnsafeBufferPointer { tag in last.utf8.withUnsafeBufferPointer { $0.sameBytes(as: tag) } }
                })
            {
                return last._withUnsafeGuaranteedRef { $0.bump() }
            }
            bump(.reply, String(decoding: value, as: UTF8.self))
        }

        /// ``bumpReply(utf8:)`` of `payload`'s operation tag, if it is a plant message: its end is
        /// compared with the tag counted last first, where finding the tag reads back from the end
        /// to the marker.
        mutating func bumpReply(of payload: [UInt8]) {
            if let last = recent.reply, last._withUnsafeGuaranteedRef({ $0.tags(payload) }) {
                return last._withUnsafeGuaranteedRef { $0.bump() }
            }
            if let tag = RelayEngine.operationTag(of: payload) { bumpReply(utf8: tag) }
        }

        /// The counted figures, per label value.
        var counts: Snapshot {
            var snapshot = Snapshot(reconnects: reconnects, redeliveries: redeliveries)
            for (key, tally) in tallies {
                switch key.figure {
                case .received: snapshot.received[key.value] = tally.count
                case .published: snapshot.published[key.value] = tally.count
                case .reply: snapshot.replies[key.value] = tally.count
                case .deadLetter: snapshot.deadLetters[key.value] = tally.count
                }
            }
            return snapshot
        }
    }

    private let state = Mutex(State())
    private let handlerTimer = Metrics.Timer(label: "trellis_handler_duration_seconds")
    private let reconnects = Counter(label: "trellis_broker_reconnects_total")
    private let redeliveries = Counter(label: "trellis_redeliveries_dropped_total")

    public init() {}

    /// A message arrived for `service`.
    public func received(service: String) {
        state.withLock { $0.bump(.received, service) }
    }

    /// Trellis published a message for `service`; `reply` names a plant operation or error tag.
    public func published(service: String, reply: String?) {
        published(service: service, replyUTF8: reply.map { ArraySlice($0.utf8) })
    }

    /// ``published(service:reply:)`` with the tag as the UTF-8 bytes of a reply: the relay counts
    /// every reply, and a tag seen before is found without making a string of it.
    public func published(service: String, replyUTF8 reply: ArraySlice<UInt8>?) {
        state.withLock { state in
            state.bump(.published, service)
            if let reply { state.bumpReply(utf8: reply) }
        }
    }

    /// A route of `service` took a message and its handler returned `publishes`: one received,
    /// one published per message, and each plant reply under its operation tag
    /// (``RelayEngine/operationTag(of:)``). One lock for all of them: the relay counts every message.
    public func routed(service: String, publishes: [MQTTMessage]) {
        state.withLock { state in
            state.bump(.received, service)
            // Only each payload is read: a `for … in` over the messages would copy each whole message.
            for index in publishes.indices {
                state.bump(.published, service)
                state.bumpReply(of: publishes[index].payload)
            }
        }
    }

    /// A message was rejected for `reason`.
    public func deadLetter(reason: String) {
        state.withLock { $0.bump(.deadLetter, reason) }
    }

    /// The broker connection came back after a loss.
    public func reconnected() {
        state.withLock { $0.reconnects += 1 }
        reconnects.increment()
    }

    /// The broker sent a message again that Trellis had already handled; it was dropped.
    public func redelivered() {
        state.withLock { $0.redeliveries += 1 }
        redeliveries.increment()
    }

    /// One handler run took `duration`.
    public func handled(in duration: Duration) {
        let (seconds, attoseconds) = duration.components
        handled(nanoseconds: UInt64(max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)))
    }

    /// One handler run took `nanoseconds`: the form the message loop uses, with two readings of a
    /// monotonic clock, where a `Duration` costs 128-bit arithmetic per message.
    public func handled(nanoseconds: UInt64) {
        let nanoseconds = Int64(clamping: nanoseconds)
        handlerTimer.recordNanoseconds(nanoseconds)
        let micros = Int(nanoseconds / 1_000)
        state.withLock { state in
            state.latencies[state.latencyCount % state.latencies.count] = micros
            state.latencyCount += 1
        }
    }

    /// Every figure now, with latency percentiles over the latest 1,024 messages.
    public func snapshot() -> Snapshot {
        state.withLock { state in
            var snapshot = state.counts
            let samples = Array(state.latencies.prefix(min(state.latencyCount, state.latencies.count))).sorted()
            if !samples.isEmpty {
                snapshot.handlerLatencyP50Microseconds = samples[samples.count / 2]
                snapshot.handlerLatencyP99Microseconds = samples[min(samples.count - 1, samples.count * 99 / 100)]
            }
            return snapshot
        }
    }
}
