import Foundation
import Testing
import TrellisCore
import TrellisMQTTTypes
import TrellisRelay

/// What the relay keeps of its traffic and when it streams it: the ring holds the newest 256
/// messages within 128 KiB, the stream is on only within a watcher's time (5 minutes at most), and at
/// most 500 events a second are handed out.
@Suite("Watch: the relay's ring of recent traffic and its stream")
struct TrafficWatchTests {
    static let describer = RelaySettings().watchDescriber
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func message(_ index: Int, bytes: Int = 10) -> MQTTMessage {
        MQTTMessage(topic: "rpi/sensors/s\(index)", payload: Array(repeating: 0x61, count: bytes), qos: .atMostOnce)
    }

    static func kept(_ watch: TrafficWatch) -> [Int] {
        watch.trace(with: describer, limit: .max) { _ in true }.map(\.seq)
    }

    @Test("the newest 256 messages are kept, oldest first; a trace is cut to its newest")
    func capacity() {
        let watch = TrafficWatch()
        for index in 1...500 { _ = watch.saw(Self.message(index), publishes: [], at: Self.start) }
        #expect(watch.keptCount == TrafficWatch.capacity)
        #expect(Self.kept(watch) == Array(245...500))
        #expect(watch.trace(with: Self.describer, limit: 3) { _ in true }.map(\.seq) == [498, 499, 500])
        #expect(watch.trace(with: Self.describer, limit: 10) { $0.topic == "rpi/sensors/s300" }.map(\.seq) == [300])
    }

    @Test("what is kept, payloads and each message's own storage, is held within 128 KiB: the oldest go first")
    func bytes() {
        let watch = TrafficWatch()
        let quarter = 1 << 14
        for index in 1...6 {
            _ = watch.saw(
                Self.message(index, bytes: quarter), publishes: [Self.message(0, bytes: quarter)], at: Self.start)
        }
        // Three of 32 KiB and their storage fit in 128 KiB; a fourth does not.
        #expect(Self.kept(watch) == [4, 5, 6])
        // One message larger than the whole bound is counted (its number is taken) but not kept, and
        // takes nothing kept with it.
        _ = watch.saw(Self.message(7, bytes: TrafficWatch.byteLimit + 1), publishes: [], at: Self.start)
        _ = watch.saw(Self.message(8), publishes: [], at: Self.start)
        #expect(Self.kept(watch) == [4, 5, 6, 8])
        // User properties are not kept: 1 MiB of them costs the ring nothing.
        let heavy = MQTTMessage(
            topic: "rpi/sensors/s9", payload: [], qos: .atLeastOnce,
            properties: MQTTProperties(userProperties: [UserProperty("k", String(repeating: "v", count: 1 << 20))]))
        _ = watch.saw(heavy, publishes: [], at: Self.start)
        #expect(Self.kept(watch) == [4, 5, 6, 8, 9])
    }

    @Test("a kept message reads back as it came: its UTF-8 topic, binary payload, QoS, retain and replies")
    func roundTrip() throws {
        let watch = TrafficWatch()
        let payload: [UInt8] = [0x00, 0xFF, 0x3B, 0x0A, 0x80]
        let message = MQTTMessage(topic: "rpi/sensors/gärten", payload: payload, qos: .exactlyOnce, retain: true)
        let reply = MQTTMessage(topic: "rpi/replies/ü", payload: [], qos: .atLeastOnce)
        _ = watch.saw(message, publishes: [reply], at: Self.start)
        // A later large message in a reused slot leaves nothing of the earlier one behind.
        for index in 1...TrafficWatch.capacity {
            _ = watch.saw(Self.message(index, bytes: 300), publishes: [], at: Self.start)
        }
        _ = watch.saw(message, publishes: [reply], at: Self.start)
        let event = try #require(watch.trace(with: Self.describer, limit: 1) { _ in true }.first)
        #expect(event.topic == "rpi/sensors/gärten" && event.qos == 2 && event.retain)
        #expect(event.payload == String(decoding: payload, as: UTF8.self))
        #expect(event.replies.map(\.topic) == ["rpi/replies/ü"])
    }

    @Test("a press fanned out to 300 clients keeps 8 of its messages, its last among them, and its count")
    func fanOut() {
        let watch = TrafficWatch()
        let deliveries = (0..<300).map {
            MQTTMessage(topic: "p2o/clients/c\($0)/button-press", payload: Array("door".utf8), qos: .atLeastOnce)
        }
        let state = MQTTMessage(topic: "p2o/buttons/door/state", payload: Array("{}".utf8), qos: .atLeastOnce)
        let press = MQTTMessage(topic: "p2o/buttons/door/press", payload: [], qos: .atLeastOnce)
        _ = watch.saw(press, publishes: [state] + deliveries, at: Self.start)
        let event = try? #require(watch.trace(with: Self.describer, limit: 1) { _ in true }.first)
        #expect(event?.fanOut == 300 && event?.summary == "press of door, to 300 clients")
        #expect(event?.replies.count == 9 && event?.replies[7].topic == "p2o/clients/c299/button-press")
        #expect(event?.replies.last?.summary == "293 more not kept for tracing")
    }

    @Test("the stream is on only within a watcher's time, at most five minutes from the request")
    func window() {
        let watch = TrafficWatch()
        #expect(watch.saw(Self.message(1), publishes: [], at: Self.start) == nil)
        let until = watch.watch(for: 3_600, at: Self.start)
        #expect(until == Self.start.addingTimeInterval(TrafficWatch.longestWatch))
        #expect(watch.saw(Self.message(2), publishes: [], at: Self.start.addingTimeInterval(299)) == 2)
        #expect(watch.saw(Self.message(3), publishes: [], at: Self.start.addingTimeInterval(301)) == nil)
        // A shorter request does not cut a longer one short.
        watch.watch(for: 120, at: Self.start.addingTimeInterval(400))
        watch.watch(for: 10, at: Self.start.addingTimeInterval(401))
        #expect(watch.isWatched(at: Self.start.addingTimeInterval(500)))
        #expect(!watch.isWatched(at: Self.start.addingTimeInterval(521)))
    }

    @Test("at most 500 events a second are handed out; the next second starts afresh; the ring keeps its newest")
    func rate() {
        let watch = TrafficWatch()
        watch.watch(for: 60, at: Self.start)
        let first = (0..<600).compactMap { watch.saw(Self.message($0), publishes: [], at: Self.start) }
        #expect(first.count == TrafficWatch.eventsPerSecond && first.last == 500)
        let next = watch.saw(Self.message(0), publishes: [], at: Self.start.addingTimeInterval(1))
        #expect(next == 601)
        #expect(watch.keptCount == TrafficWatch.capacity)
    }
}
