import Foundation
import Synchronization
import TrellisCore
import TrellisMQTTTypes

/// What the relay keeps of the traffic for `trellis watch` and `trellis trace` (docs/watch.md):
/// the recent messages with what their handling published, in a ring bounded by count and bytes,
/// and, while a watcher has asked within its time, each message's ``WatchEvent`` to publish.
///
/// Nothing is decoded unless someone watches or traces: with no one watching, a message costs one
/// uncontended lock and the ring's slot (its payloads are shared, not copied). The stream is
/// bounded too: at most ``eventsPerSecond`` events a second, the rest left out (the watcher sees
/// the gap in the events' numbers).
public final class TrafficWatch: Sendable {
    /// The most messages kept for `trace`, and the most bytes of payload (theirs and their replies').
    public static let capacity = 1_000
    public static let byteLimit = 4 << 20
    /// The longest a watcher's request keeps the stream on: a watcher renews it while it runs.
    public static let longestWatch: TimeInterval = 300
    /// The most events published in one second.
    public static let eventsPerSecond = 500

    /// One message as kept.
    struct Entry {
        var message: MQTTMessage
        var publishes: [MQTTMessage]
        var at: Date
        var seq: Int
        var bytes: Int
    }

    private struct State {
        var ring: [Entry?] = Array(repeating: nil, count: TrafficWatch.capacity)
        var start = 0
        var count = 0
        var bytes = 0
        var seq = 0
        /// Until when the stream is on.
        var watchedUntil = Date.distantPast
        /// The second being counted against ``eventsPerSecond``, and its events so far.
        var second = 0
        var sentThisSecond = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Turns the stream on until `seconds` after `now` (at most ``longestWatch``); returns until when.
    @discardableResult
    public func watch(for seconds: TimeInterval, at now: Date) -> Date {
        let until = now.addingTimeInterval(min(max(seconds, 0), Self.longestWatch))
        state.withLock { $0.watchedUntil = max($0.watchedUntil, until) }
        return until
    }

    /// Whether the stream is on at `now`.
    public func isWatched(at now: Date) -> Bool { state.withLock { $0.watchedUntil > now } }

    /// Keeps `message`, received at `at`, and what its handling published; returns its number
    /// when the stream is on and within its rate, for the caller to describe and publish.
    public func saw(_ message: MQTTMessage, publishes: [MQTTMessage], at: Date) -> Int? {
        var bytes = message.payload.count
        for publish in publishes { bytes += publish.payload.count }
        return state.withLock { state -> Int? in
            state.seq += 1
            let entry = Entry(message: message, publishes: publishes, at: at, seq: state.seq, bytes: bytes)
            while state.count > 0, state.count == Self.capacity || state.bytes + bytes > Self.byteLimit {
                state.bytes -= state.ring[state.start]?.bytes ?? 0
                state.ring[state.start] = nil
                state.start = (state.start + 1) % Self.capacity
                state.count -= 1
            }
            if bytes <= Self.byteLimit {
                state.ring[(state.start + state.count) % Self.capacity] = entry
                state.count += 1
                state.bytes += bytes
            }
            guard state.watchedUntil > at else { return nil }
            let second = Int(at.timeIntervalSince1970)
            if second != state.second { (state.second, state.sentThisSecond) = (second, 0) }
            guard state.sentThisSecond < Self.eventsPerSecond else { return nil }
            state.sentThisSecond += 1
            return state.seq
        }
    }

    /// How many messages are kept.
    public var keptCount: Int { state.withLock(\.count) }

    /// The messages kept, oldest first.
    func entries() -> [Entry] {
        state.withLock { state in
            (0..<state.count).compactMap { state.ring[(state.start + $0) % Self.capacity] }
        }
    }

    /// The kept messages' events that `matches` takes, oldest first, at most `limit` of the newest.
    public func trace(
        with describer: WatchDescriber, limit: Int, where matches: (WatchEvent) -> Bool
    ) -> [WatchEvent] {
        let events = entries().map { describer.describe($0.message, publishes: $0.publishes, at: $0.at, seq: $0.seq) }
        return Array(events.filter(matches).suffix(limit))
    }
}
