import Foundation
import Testing
import TrellisCore
import TrellisMQTTTypes

/// `trellis watch`'s filters and its lines: terms of one kind are alternatives, kinds all apply;
/// a term that cannot be read is refused naming it; a payload cannot drive the terminal.
@Suite("Watch: filters and lines")
struct WatchFilterTests {
    static func event(_ topic: String, _ text: String, _ publishes: [MQTTMessage] = []) -> WatchEvent {
        WatchDescriberTests.describer.describe(
            MQTTMessage(topic: topic, payload: Array(text.utf8), qos: .atMostOnce), publishes: publishes,
            at: WatchDescriberTests.at, seq: 1)
    }

    static let plant = event("rpi/torpi/bob", "ID:1;sender:bob;receiver:h;payload:;operation:REQ_numPlants")
    static let press = event("p2o/buttons/door/press", "")
    static let muted = event(
        "rpi/torpi", "ID:1;sender:eve;receiver:h;payload:;operation:REQ_numPlants",
        [WatchDescriberTests.letter("spam_muted", topic: "rpi/torpi")])

    @Test("each kind of term, bare filters as topics, alternatives within a kind and all kinds together")
    func matching() throws {
        func shown(_ words: [String]) throws -> [Bool] {
            let filter = try WatchFilter(parsing: words)
            return [Self.plant, Self.press, Self.muted].map(filter.admits)
        }
        #expect(try shown([]) == [true, true, true])
        #expect(try shown(["client:bob"]) == [true, false, false])
        #expect(try shown(["service:plant"]) == [true, false, true])
        #expect(try shown(["service:plant", "service:buttons"]) == [true, true, true])
        #expect(try shown(["rpi/#"]) == [true, false, true])
        #expect(try shown(["topic:p2o/buttons/+/press"]) == [false, true, false])
        #expect(try shown(["verdict:muted"]) == [false, false, true])
        #expect(try shown(["verdict:refused"]) == [false, false, true])
        #expect(try shown(["service:plant", "verdict:answered"]) == [false, false, false])
        #expect(try shown(["service:plant", "client:eve"]) == [false, false, true])
    }

    @Test(
        "a term that cannot be read is refused, naming it",
        arguments: [
            ("verdict:bogus", "verdict:bogus: a verdict is one of"), ("a/#/b", "# may only be a whole last level"),
            ("topic:x+", "+ may only be a whole level"), ("client:", "no value after the colon")
        ])
    func refused(word: String, says: String) {
        #expect {
            _ = try WatchFilter(parsing: [word])
        } throws: { error in
            "\(error)".contains(says)
        }
    }

    @Test("a line: time, service, client, summary, verdict and replies; no colour unless asked")
    func line() {
        let event = Self.event(
            "rpi/torpi/bob", "ID:4;sender:bob;receiver:h;payload:;operation:REQ_numPlants",
            [
                MQTTMessage(
                    topic: "rpi/fromrpi/bob",
                    payload: Array("ID:4;sender:h;receiver:bob;payload:3;operation:RES_numPlants".utf8),
                    qos: .atMostOnce)
            ])
        let plain = WatchLine.render(event, colour: false)
        #expect(
            plain
                == "10:53:20.250 plant bob  REQ_numPlants #4 from bob  → answered  [trellis #1]\n"
                + "    ↳ rpi/fromrpi/bob  RES_numPlants #4 from h: 3")
        let coloured = WatchLine.render(event, colour: true)
        #expect(coloured.contains("\u{1B}[32manswered\u{1B}[0m"))
    }

    @Test("escape sequences in a payload reach the terminal as ?")
    func escapes() {
        let event = Self.event("rpi/sensors/0x36", "\u{1B}]0;owned\u{07}\u{1B}[2J")
        let line = WatchLine.render(event, colour: false)
        #expect(!line.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
    }
}
