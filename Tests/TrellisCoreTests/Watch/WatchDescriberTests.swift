import Foundation
import Testing
import TrellisCore
import TrellisMQTTTypes

/// What `trellis watch` shows of a message, made from the message and what its handling published:
/// each protocol decoded, the verdict read from the answers and dead letters, the replies linked.
@Suite("Watch: events described from the message and its answers")
struct WatchDescriberTests {
    static let describer = WatchDescriber(
        prefixes: TopicPrefixes(), deadLetterTopic: "trellis/deadletter", relay: "trellis")
    static let at = Date(timeIntervalSince1970: 1_764_500_000.25)

    static func message(_ topic: String, _ text: String, retain: Bool = false) -> MQTTMessage {
        MQTTMessage(topic: topic, payload: Array(text.utf8), qos: .atLeastOnce, retain: retain)
    }

    static func letter(_ reason: String, topic: String) -> MQTTMessage {
        let letter = DeadLetter(reason: reason, topic: topic, payload: Array("x".utf8), receivedAt: at)
        return MQTTMessage(topic: "trellis/deadletter", payload: letter.json(), qos: .atLeastOnce)
    }

    static func describe(_ message: MQTTMessage, _ publishes: [MQTTMessage]) -> WatchEvent {
        describer.describe(message, publishes: publishes, at: at, seq: 7)
    }

    @Test("a plant-tracker request answered: its five fields decoded, its id, sender and reply linked")
    func plantAnswered() {
        let request = Self.message(
            "rpi/torpi/bob", "ID:2;sender:Bob's iPhone;receiver:Host-RPI3B+;payload:12%3A30;operation:REQ_numPlants")
        let reply = Self.message(
            "rpi/fromrpi/bob", "ID:2;sender:Host-RPI3B+;receiver:Bob's iPhone;payload:3;operation:RES_numPlants")
        let event = Self.describe(request, [reply])
        #expect(event.service == "plant")
        #expect(event.client == "bob")
        #expect(event.request == "2")
        #expect(event.fields["payload"] == "12:30")
        #expect(event.summary == "REQ_numPlants #2 from Bob's iPhone: 12:30")
        #expect(event.verdict == .answered && event.reason == nil)
        #expect(event.replies == [.init(topic: "rpi/fromrpi/bob", summary: "RES_numPlants #2 from Host-RPI3B+: 3")])
        #expect(event.at == "2025-11-30T10:53:20.250Z" && event.seq == 7 && event.relay == "trellis")
    }

    @Test("on the shared topic the sender names the client; an ERR_ answer and its dead letter are an error")
    func plantRefused() {
        let request = Self.message("rpi/torpi", "ID:3;sender:ann;receiver:Host-RPI3B+;payload;operation:REQ_numPlants")
        let reply = Self.message(
            "rpi/fromrpi", "ID:3;sender:Host-RPI3B+;receiver:ann;payload:x;operation:ERR_missingVals")
        let event = Self.describe(request, [reply, Self.letter("ERR_missingVals", topic: "rpi/torpi")])
        #expect(event.client == "ann")
        #expect(event.verdict == .error && event.reason == "ERR_missingVals")
        #expect(event.replies.count == 1, "the dead letter is not a reply")
    }

    @Test(
        "dead letters: spam is muted, any other reason dead-lettered, an unknown topic named",
        arguments: [
            ("spam_muted", WatchEvent.Verdict.muted), ("invalid_button_id", .deadLettered),
            ("unknown_topic", .deadLettered)
        ])
    func deadLetters(reason: String, verdict: WatchEvent.Verdict) {
        let event = Self.describe(Self.message("elsewhere/x", "hi"), [Self.letter(reason, topic: "elsewhere/x")])
        #expect(event.verdict == verdict && event.reason == reason)
        #expect(event.service == "unknown" && event.replies.isEmpty)
    }

    @Test("a press: fanned out to each registered client, handled")
    func press() {
        let publishes = [
            Self.message("p2o/buttons/door/state", "{}", retain: true),
            Self.message("p2o/clients/a/button-press", "door"), Self.message("p2o/clients/b/button-press", "door")
        ]
        let event = Self.describe(Self.message("p2o/buttons/door/press", ""), publishes)
        #expect(event.service == "buttons" && event.fanOut == 2)
        #expect(event.summary == "press of door, to 2 clients")
        #expect(event.verdict == .handled && event.replies.count == 3)
    }

    @Test("a JSON request: its service, action, client and transaction; a refusal's code is the reason")
    func json() {
        let request = Self.message("trellis/clients/ann/request/fleet/list", #"{"transaction":"t-9"}"#)
        let ok = Self.message(
            "trellis/clients/ann/response/fleet/list", #"{"data":[],"status":"ok","transaction":"t-9"}"#)
        let answered = Self.describe(request, [ok])
        #expect(answered.service == "fleet" && answered.client == "ann" && answered.request == "t-9")
        #expect(answered.summary == "fleet/list" && answered.verdict == .answered)
        #expect(answered.replies.map(\.summary) == ["ok"])
        let refused = Self.message(
            "trellis/clients/ann/response/fleet/list", #"{"code":"forbidden","error":"no","status":"error"}"#)
        let event = Self.describe(request, [refused])
        #expect(event.verdict == .error && event.reason == "forbidden")
        #expect(event.replies.map(\.summary) == ["error: forbidden"])
    }

    @Test("a reading and a device's log line are handled; the topic names the sensor and the device")
    func handled() {
        let reading = Self.describe(Self.message("rpi/sensors/0x36", #"{"moisture":7}"#), [])
        #expect(reading.service == "sensor" && reading.client == "0x36" && reading.verdict == .handled)
        #expect(reading.summary == #"reading of 0x36: {"moisture":7}"#)
        let log = Self.describe(
            Self.message("devices/n1/log", "line\none"), [Self.message("devices/n1/info", "{}", retain: true)])
        #expect(log.service == "devices" && log.client == "n1" && log.verdict == .handled)
        #expect(log.summary == "log of n1: line one")
    }

    @Test("a payload over 512 bytes is cut at a character's start and its size kept; bad UTF-8 shown replaced")
    func cut() {
        let text = String(repeating: "é", count: 400)
        let event = Self.describe(Self.message("rpi/sensors/0x36", text), [])
        #expect(event.size == 800)
        #expect(event.payload == String(repeating: "é", count: 256))
        let bad = Self.describer.describe(
            MQTTMessage(topic: "rpi/torpi", payload: [0x49, 0xFF, 0x44], qos: .atMostOnce), publishes: [],
            at: Self.at, seq: 1)
        #expect(bad.payload == "I\u{FFFD}D" && bad.size == nil)
        #expect(bad.summary == "not a plant-tracker message")
    }

    @Test("the event's JSON: snake_case names, absent fields left out, read back the same")
    func coding() throws {
        let event = Self.describe(
            Self.message("p2o/buttons/door/press", ""), [Self.message("p2o/clients/a/button-press", "door")])
        let json = String(decoding: JSONEnvelope.encode(event), as: UTF8.self)
        #expect(json.contains(#""fan_out":1"#) && json.contains(#""verdict":"handled""#))
        #expect(!json.contains("\"client\"") && !json.contains("\"size\""))
        #expect(try JSONDecoder().decode(WatchEvent.self, from: Data(json.utf8)) == event)
        // The stream's own writer gives the same object, hostile text and all.
        var hostile = Self.describe(
            Self.message("rpi/torpi/\u{2028}", "ID:\"1\\;sender:a\u{1}b;receiver:h;payload:é;operation:REQ_numPlants"),
            [Self.letter("spam_muted", topic: "rpi/torpi")])
        hostile.size = 9_000
        for one in [event, hostile] {
            let written = one.json()
            #expect(try JSONDecoder().decode(WatchEvent.self, from: Data(written)) == one)
            #expect(String(decoding: written, as: UTF8.self).contains("\"client\"") == (one.client != nil))
        }
    }
}
