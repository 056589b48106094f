import Foundation
import Synchronization
import TrellisCore
import TrellisMQTTTypes

/// What the relay keeps of the traffic for `trellis watch` and `trellis trace` (docs/watch.md):
/// the recent messages with what their handling published, in a ring bounded by count and bytes,
/// and, while a watcher has asked within its time, each message's ``WatchEvent`` to publish.
///
/// Nothing is decoded unless someone watches or traces: with no one watching, a message costs one
/// uncontended lock and a slot that shares its storage (``Slot``). The stream is
/// bounded too: at most ``eventsPerSecond`` events a second, the rest left out (the watcher sees
/// the gap in the events' numbers).
public final class TrafficWatch: Sendable {
    /// The most messages kept for `trace`, and the most bytes they may hold (their payloads and their
    /// replies', and ``overhead`` for each message).
    public static let capacity = 256
    public static let byteLimit = 128 << 10
    /// The longest a watcher's request keeps the stream on: a watcher renews it while it runs.
    public static let longestWatch: TimeInterval = 300
    /// The most events published in one second.
    public static let eventsPerSecond = 500

    /// The most of a message's publishes kept: its first ones, and its last (where a dead letter goes).
    /// A press fanned out to thousands of clients keeps their count, not their messages.
    public static let publishesKept = 8
    /// What one kept message is counted as beyond its payloads' bytes: the message's own storage.
    static let overhead = 128

    private struct State {
        var ring = [Slot](repeating: Slot(), count: TrafficWatch.capacity)
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
        var kept = publishes
        var presses: Int?
        if publishes.count > Self.publishesKept {
            kept = Array(publishes.prefix(Self.publishesKept - 1)) + [publishes[publishes.count - 1]]
            presses = publishes.count(where: { $0.topic.hasSuffix("/button-press") })
        }
        // Kept without their v5 properties or delivery, as the message is. Replies are mostly bare
        // already: their array is kept as it is, shared, not copied.
        // Only each kept publish's parts are read: a `for … in` would copy each whole message.
        var bytes = message.payload.count + message.topic.utf8.count + Self.overhead
        var bare = true
        for index in kept.indices {
            bytes += kept[index].payload.count + kept[index].topic.utf8.count + Self.overhead
            bare = bare && kept[index].properties.isEmpty && kept[index].delivery == nil
        }
        if !bare {
            kept = kept.map { MQTTMessage(topic: $0.topic, payload: $0.payload, qos: $0.qos, retain: $0.retain) }
        }
        return state.withLock { state -> Int? in
            state.seq += 1
            // A message larger than the whole bound is not kept, and takes nothing kept with it.
            if bytes <= Self.byteLimit {
                while state.count > 0, state.count == Self.capacity || state.bytes + bytes > Self.byteLimit {
                    state.bytes -= state.ring[state.start].size
                    // With the ring full, the oldest slot is the one written next: let go when written.
                    if state.count < Self.capacity { state.ring[state.start] = Slot() }
                    state.start = (state.start + 1) % Self.capacity
                    state.count -= 1
                }
                state.ring[(state.start + state.count) % Self.capacity] = Slot(
                    topic: message.topic, payload: message.payload, qos: message.qos, retain: message.retain,
                    publishes: kept, size: bytes, omitted: publishes.count - kept.count, presses: presses, at: at,
                    seq: state.seq)
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
            (0..<state.count).map { state.ring[(state.start + $0) % Self.capacity].entry }
        }
    }

    /// The kept messages' events that `matches` takes, oldest first, at most `limit` of the newest.
    public func trace(
        with describer: WatchDescriber, limit: Int, where matches: (WatchEvent) -> Bool
    ) -> [WatchEvent] {
        let events = entries().map { entry in
            var event = describer.describe(
                entry.message, publishes: entry.publishes, at: entry.at, seq: entry.seq)
            if entry.omitted > 0 {
                if event.fanOut != nil, let presses = entry.presses {
                    event.fanOut = presses
                    event.summary = WatchDescriber.pressSummary(event.summary, clients: presses)
                }
                event.replies.append(
                    WatchEvent.Reply(topic: "…", summary: "\(entry.omitted) more not kept for tracing"))
            }
            return event
        }
        return Array(events.filter(matches).suffix(limit))
    }
}
