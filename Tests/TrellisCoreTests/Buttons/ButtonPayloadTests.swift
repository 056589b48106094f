import Foundation
import Testing
@testable import TrellisCore

@Suite("Button payloads: exact bytes")
struct ButtonPayloadTests {
    static let first = Date(timeIntervalSince1970: 1_795_344_065.123)
    static let second = Date(timeIntervalSince1970: 1_795_344_066)
    static let door = ButtonState(id: "door", total: 7, history: [first, second])
    static let times = #"["2026-11-22T10:41:05.123Z","2026-11-22T10:41:06.000Z"]"#

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test("connection-response and unregister-response on success")
    func successes() {
        #expect(Self.text(ButtonPayloads.connectionSuccess()) == #"{"status":"success"}"#)
        #expect(Self.text(ButtonPayloads.unregisterSuccess()) == #"{"status":"success"}"#)
    }

    @Test(
        "failures carry the sentence, JSON-escaped, slashes and non-ASCII as they are",
        arguments: [
            ("no", #"{"error":"no","status":"failed"}"#),
            (
                "the button id contains '/', which cannot be part of an MQTT topic level",
                #"{"error":"the button id contains '/', which cannot be part of an MQTT topic level","status":"failed"}"#
            ),
            (#"say "hi" \ back"#, #"{"error":"say \"hi\" \\ back","status":"failed"}"#),
            ("küche\n", #"{"error":"küche\n","status":"failed"}"#),
            ("", #"{"error":"","status":"failed"}"#)
        ])
    func failures(error: String, json: String) {
        #expect(Self.text(ButtonPayloads.failure(error)) == json)
    }

    @Test(
        "register-response",
        arguments: [
            (nil, 0, #"{"status":"success"}"#),
            (nil, 3, #"{"status":"success"}"#),
            (door, 5, #"{"button":{"count":5,"history":\#(times),"id":"door"},"status":"success"}"#),
            (door, 0, #"{"button":{"count":0,"history":\#(times),"id":"door"},"status":"success"}"#),
            (
                ButtonState(id: "küche", total: 0, history: []), 0,
                #"{"button":{"count":0,"history":[],"id":"küche"},"status":"success"}"#
            ),
            (
                ButtonState(id: "a\"b", total: 1, history: [Date(timeIntervalSince1970: 0)]), 1,
                #"{"button":{"count":1,"history":["1970-01-01T00:00:00.000Z"],"id":"a\"b"},"status":"success"}"#
            )
        ] as [(ButtonState?, Int, String)])
    func registerResponse(button: ButtonState?, missed: Int, json: String) {
        #expect(Self.text(ButtonPayloads.registerSuccess(button: button, missed: missed)) == json)
    }

    @Test(
        "the retained state",
        arguments: [
            (door, #"{"history":\#(times),"id":"door","total":7}"#),
            (ButtonState(id: "küche", total: 0, history: []), #"{"history":[],"id":"küche","total":0}"#),
            (
                ButtonState(id: "b", total: 1_000_000, history: [Date(timeIntervalSince1970: -0.001)]),
                #"{"history":["1969-12-31T23:59:59.999Z"],"id":"b","total":1000000}"#
            )
        ])
    func state(button: ButtonState, json: String) {
        #expect(Self.text(ButtonPayloads.state(button)) == json)
    }

    @Test("the history is written in the order given, at most as long as given")
    func historyOrder() throws {
        let dates = (0..<20).map { Date(timeIntervalSince1970: 1_795_344_000 + Double($0)) }
        let json = Self.text(ButtonPayloads.state(ButtonState(id: "x", total: 25, history: dates)))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let history = try #require(object["history"] as? [String])
        #expect(history.count == 20)
        #expect(history.first == "2026-11-22T10:40:00.000Z")
        #expect(history.last == "2026-11-22T10:40:19.000Z")
        #expect(ButtonPayloads.historyLimit == 20)
    }
}
