import Foundation
import Testing
import TrellisMQTTTypes
import TrellisCore

private let t0 = CaptureTime.parse("2026-11-22T10:41:05.123456Z")!

@Suite("Capture lines")
struct CaptureLineTests {
    /// A capture line and the record it stands for, named for what the example shows.
    struct LineCase: Sendable, CustomTestStringConvertible {
        var name: String
        var line: String
        var record: CaptureRecord
        var testDescription: String { name }
    }

    static let encodeCases: [LineCase] = [
        LineCase(
            name: "text payload",
            line:
                #"{"t":"2026-11-22T10:41:05.123456Z","topic":"rpi/torpi","payload":"ID:0;sender:Bob's iPhone;payload:all","qos":1,"retain":false}"#,
            record: CaptureRecord(t: t0, topic: "rpi/torpi", text: "ID:0;sender:Bob's iPhone;payload:all", qos: 1)),
        LineCase(
            name: "empty payload, retained, QoS 2",
            line:
                #"{"t":"2026-11-22T10:41:05.123456Z","topic":"p2o/buttons/b1/press","payload":"","qos":2,"retain":true}"#,
            record: CaptureRecord(t: t0, topic: "p2o/buttons/b1/press", payload: [], qos: 2, retain: true)),
        LineCase(
            name: "escapes and non-ASCII text",
            line:
                #"{"t":"2026-11-22T10:41:05.123456Z","topic":"a/é","payload":"\"q\" \\ /\n\t\u0001 café ☕","qos":0,"retain":false}"#,
            record: CaptureRecord(t: t0, topic: "a/é", text: "\"q\" \\ /\n\t\u{01} café ☕")),
        LineCase(
            name: "binary payload as base64",
            line: #"{"t":"2026-11-22T10:41:05.123456Z","topic":"bin","payload_base64":"/wAB","qos":0,"retain":false}"#,
            record: CaptureRecord(t: t0, topic: "bin", payload: [0xFF, 0x00, 0x01])),
        LineCase(
            name: "every property",
            line:
                #"{"t":"2026-11-22T10:41:05.123456Z","topic":"rpi/torpi","payload":"x","qos":1,"retain":false,"properties":{"response_topic":"my/replies","correlation_data_base64":"YzH/","user_properties":[["k","v1"],["k","v2"]],"content_type":"text/plain"}}"#,
            record: CaptureRecord(
                t: t0, topic: "rpi/torpi", text: "x", qos: 1,
                properties: MQTTProperties(
                    responseTopic: "my/replies", correlationData: [0x63, 0x31, 0xFF],
                    userProperties: [.init("k", "v1"), .init("k", "v2")], contentType: "text/plain"))),
        LineCase(
            name: "only correlation data",
            line:
                #"{"t":"2026-11-22T10:41:05.123456Z","topic":"r","payload":"","qos":0,"retain":false,"properties":{"correlation_data_base64":""}}"#,
            record: CaptureRecord(t: t0, topic: "r", text: "", properties: MQTTProperties(correlationData: [])))
    ]

    @Test("encodes one deterministic line and decodes it back", arguments: encodeCases)
    func encodeAndDecode(_ example: LineCase) throws {
        #expect(example.record.jsonLine == example.line)
        let decoded = try CaptureRecord.decode(line: example.line).get()
        #expect(decoded == example.record)
        #expect(decoded.jsonLine == example.line)
    }

    @Test("the JSON written is what Foundation reads")
    func validJSON() throws {
        for example in Self.encodeCases {
            let object = try JSONSerialization.jsonObject(with: Data(example.line.utf8)) as? [String: Any]
            #expect(object?["topic"] as? String == example.record.topic)
        }
    }

    @Test("decoding accepts any key order, spacing and left-out qos/retain")
    func lenientShape() throws {
        let record = try CaptureRecord.decode(
            line: #"  { "retain" : true , "payload":"p", "topic":"a/b", "t":"2026-11-22T10:41:05Z" } "#
        ).get()
        #expect(
            record
                == CaptureRecord(
                    t: CaptureTime.parse("2026-11-22T10:41:05Z")!, topic: "a/b", text: "p", qos: 0, retain: true))
    }

    // Lines as mosquitto 2.0.11 prints them with `mosquitto_sub -V mqttv5 -F '%j'` (and `%J`).
    static let mosquittoCases: [LineCase] = [
        LineCase(
            name: "text, UTC",
            line:
                #"{"tst":"2026-11-22T11:37:01.137471Z+0000","topic":"a/b","qos":0,"retain":0,"payloadlen":9,"payload":"hello \"w\""}"#,
            record: CaptureRecord(
                t: CaptureTime.parse("2026-11-22T11:37:01.137471Z")!, topic: "a/b", text: "hello \"w\"")),
        LineCase(
            name: "local time with its offset, QoS 1, retained",
            line:
                #"{"tst":"2026-11-22T12:37:21.620429Z+0100","topic":"a/json","qos":1,"retain":1,"payloadlen":7,"mid":1,"payload":"{\"x\":1}"}"#,
            record: CaptureRecord(
                t: CaptureTime.parse("2026-11-22T11:37:21.620429Z")!, topic: "a/json", text: #"{"x":1}"#, qos: 1,
                retain: true)),
        LineCase(
            name: "escaped control characters and UTF-8",
            line:
                #"{"tst":"2026-11-22T12:37:22.137196Z+0100","topic":"a/utf","qos":1,"retain":0,"payloadlen":11,"mid":3,"payload":"café \u0001\n\t\\/"}"#,
            record: CaptureRecord(
                t: CaptureTime.parse("2026-11-22T11:37:22.137196Z")!, topic: "a/utf", text: "café \u{01}\n\t\\/", qos: 1
            )),
        LineCase(
            name: "properties, repeated user property names, other properties ignored",
            line:
                #"{"tst":"2026-11-22T11:37:01.174516Z+0000","topic":"a/props","qos":0,"retain":0,"payloadlen":1,"properties":{"response-topic":"resp/x","correlation-data":"abc","user-properties":{"k1":"v1","k1":"v2"},"content-type":"text/plain","message-expiry-interval":60},"payload":"p"}"#,
            record: CaptureRecord(
                t: CaptureTime.parse("2026-11-22T11:37:01.174516Z")!, topic: "a/props", text: "p",
                properties: MQTTProperties(
                    responseTopic: "resp/x", correlationData: Array("abc".utf8),
                    userProperties: [.init("k1", "v1"), .init("k1", "v2")],
                    contentType: "text/plain"))),
        LineCase(
            name: "empty payload is null",
            line:
                #"{"tst":"2026-11-22T11:37:01.180929Z+0000","topic":"a/empty","qos":0,"retain":0,"payloadlen":0,"payload":null}"#,
            record: CaptureRecord(t: CaptureTime.parse("2026-11-22T11:37:01.180929Z")!, topic: "a/empty", payload: [])),
        LineCase(
            name: "%J: JSON payload embedded as it was",
            line:
                #"{"tst":"2026-11-22T11:37:07.952389Z+0000","topic":"a/json","qos":1,"retain":1,"payloadlen":7,"mid":1,"payload":{"x":1}}"#,
            record: CaptureRecord(
                t: CaptureTime.parse("2026-11-22T11:37:07.952389Z")!, topic: "a/json", text: #"{"x":1}"#, qos: 1,
                retain: true))
    ]

    @Test("reads mosquitto_sub -F '%j' lines", arguments: mosquittoCases)
    func mosquittoSub(_ example: LineCase) throws {
        #expect(try CaptureRecord.decode(line: example.line).get() == example.record)
    }

    @Test("a raw binary payload from mosquitto_sub is kept when nothing was cut")
    func mosquittoRawBytes() throws {
        let line =
            Array(
                #"{"tst":"2026-11-22T11:37:01.159389Z+0000","topic":"a/bin","qos":0,"retain":0,"payloadlen":2,"payload":""#
                    .utf8)
            + [0xFF, 0xFE] + Array("\"}".utf8)
        let record = try CaptureRecord.decode(bytes: line).get()
        #expect(record.payload == [0xFF, 0xFE])
        #expect(record.jsonLine.contains(#""payload_base64":"//4=""#))
    }

    struct BadCase: Sendable, CustomTestStringConvertible {
        var line: String
        var message: String
        var testDescription: String { message }
    }

    static let badCases: [BadCase] = [
        BadCase(line: "not json", message: "not valid JSON at column 1: expected a JSON value, found 'n'"),
        BadCase(
            line: #"{"t":"2026-11-22T10:41:05Z","topic":"a""#,
            message: "not valid JSON at column 40: the line ends inside an object"),
        BadCase(line: #"["t"]"#, message: "a capture line must be a JSON object, not an array"),
        BadCase(line: #"{"topic":"a","payload":"x"}"#, message: #"missing "t""#),
        BadCase(
            line: #"{"t":"yesterday","topic":"a","payload":"x"}"#,
            message: #""t" is not an ISO 8601 time such as 2026-11-22T10:41:05.123456Z: "yesterday""#),
        BadCase(line: #"{"t":"2026-11-22T10:41:05Z","payload":"x"}"#, message: #"missing "topic""#),
        BadCase(line: #"{"t":"2026-11-22T10:41:05Z","topic":"","payload":"x"}"#, message: #""topic" is empty"#),
        BadCase(
            line: #"{"t":"2026-11-22T10:41:05Z","topic":"a/#","payload":"x"}"#,
            message: #""topic" contains a wildcard (+ or #), so it cannot be published: "a/#""#),
        BadCase(
            line: #"{"t":"2026-11-22T10:41:05Z","topic":"a"}"#,
            message: #"missing "payload" (text) or "payload_base64""#),
        BadCase(
            line: #"{"t":"2026-11-22T10:41:05Z","topic":"a","payload":"x","payload_base64":"eA=="}"#,
            message: #"both "payload" and "payload_base64" are given; use one"#),
        BadCase(
            line: #"{"t":"2026-11-22T10:41:05Z","topic":"a","payload_base64":"***"}"#,
            message: #""payload_base64" is not valid base64"#),
        BadCase(
            line: #"{"t":"2026-11-22T10:41:05Z","topic":"a","payload":7}"#,
            message: #""payload" must be a string, not a number"#),
        BadCase(
            line: #"{"t":"2026-11-22T10:41:05Z","topic":"a","payload":"x","qos":3}"#,
            message: #""qos" must be 0, 1 or 2, not 3"#),
        BadCase(
            line: #"{"t":"2026-11-22T10:41:05Z","topic":"a","payload":"x","qos":"1"}"#,
            message: #""qos" must be a whole number, not the string "1""#),
        BadCase(
            line: #"{"t":"2026-11-22T10:41:05Z","topic":"a","payload":"x","retain":1}"#,
            message: #""retain" must be true or false, not 1"#),
        BadCase(
            line: #"{"t":"2026-11-22T10:41:05Z","topic":"a","paylod":"x"}"#,
            message:
                #"unknown field "paylod" (a capture line has t, topic, payload or payload_base64, qos, retain, client, properties)"#
        ),
        BadCase(
            line: #"{"t":"2026-11-22T10:41:05Z","topic":"a","topic":"b","payload":"x"}"#,
            message: #"the field "topic" appears twice"#),
        BadCase(
            line: #"{"t":"2026-11-22T10:41:05Z","topic":"a","payload":"x","properties":{"response_topic":5}}"#,
            message: #""properties.response_topic" must be a string, not a number"#),
        BadCase(
            line: #"{"t":"2026-11-22T10:41:05Z","topic":"a","payload":"x","properties":{"user_properties":[["k"]]}}"#,
            message: #""properties.user_properties" must be a list of [name, value] pairs of strings"#),
        BadCase(
            line: #"{"t":"2026-11-22T10:41:05Z","topic":"a","payload":"x","properties":{"expiry":5}}"#,
            message:
                #"unknown property "expiry" (properties are response_topic, correlation_data_base64, user_properties, content_type)"#
        ),
        BadCase(
            line: #"{"t":"2026-11-22T10:41:05Z","topic":"a","payload":"\x"}"#,
            message: #"not valid JSON at column 52: invalid escape \x in a string"#),
        BadCase(
            line:
                #"{"tst":"2026-11-22T11:37:01.159389Z+0000","topic":"a/bin","qos":0,"retain":0,"payloadlen":3,"payload":"ab"}"#,
            message:
                #""payload" holds 2 bytes but "payloadlen" says 3: mosquitto_sub -F '%j' cuts a binary payload at its first NUL byte, so this message cannot be replayed as it was; record it with trellis record"#
        ),
        BadCase(
            line: #"{"tst":"2026-11-22T11:37:01Z+0000","topic":"a","qos":0,"retain":2,"payload":"x"}"#,
            message: #""retain" must be 0 or 1, not 2"#)
    ]

    @Test("a malformed line says what is wrong", arguments: badCases)
    func malformed(_ example: BadCase) {
        #expect(throws: CaptureLineError(example.message)) { try CaptureRecord.decode(line: example.line).get() }
    }

    @Test("a payload string that is not UTF-8 is refused in Trellis's own lines")
    func nonUTF8Payload() {
        let line = Array(#"{"t":"2026-11-22T10:41:05Z","topic":"a","payload":""#.utf8) + [0xFF] + Array("\"}".utf8)
        #expect(throws: CaptureLineError(#""payload" is not valid UTF-8; write binary payloads as "payload_base64""#)) {
            try CaptureRecord.decode(bytes: line).get()
        }
    }
}

@Suite("Capture times")
struct CaptureTimeTests {
    @Test(
        "parsing",
        arguments: [
            ("2026-11-22T10:41:05.123456Z", "2026-11-22T10:41:05.123456Z"),
            ("2026-11-22T10:41:05Z", "2026-11-22T10:41:05.000000Z"),
            ("2026-11-22T10:41:05.1Z", "2026-11-22T10:41:05.100000Z"),
            ("2026-11-22T10:41:05.123456789Z", "2026-11-22T10:41:05.123457Z"),
            ("2026-11-22T11:41:05.5+01:00", "2026-11-22T10:41:05.500000Z"),
            ("2026-11-22T05:41:05-0500", "2026-11-22T10:41:05.000000Z"),
            ("2026-11-22T11:41:05.000001Z+0100", "2026-11-22T10:41:05.000001Z"),
            ("1969-12-31T23:59:59.999999Z", "1969-12-31T23:59:59.999999Z"),
            ("2024-02-29T00:00:00Z", "2024-02-29T00:00:00.000000Z")
        ])
    func parse(_ input: String, _ output: String) throws {
        let micros = try #require(CaptureTime.parseMicroseconds(input))
        #expect(CaptureTime.format(microseconds: micros) == output)
        #expect(CaptureTime.format(CaptureTime.parse(input)!) == output)
    }

    @Test(
        "not times",
        arguments: [
            "", "yesterday", "2026-11-22", "2026-11-22T10:41:05", "2026-13-01T00:00:00Z",
            "2025-02-29T00:00:00Z", "2026-11-22T10:41:05.Z", "2026-11-22T10:41:05Zjunk"
        ])
    func notTimes(_ input: String) {
        #expect(CaptureTime.parseMicroseconds(input) == nil)
    }

    @Test("every microsecond survives a round trip through Date")
    func roundTrip() {
        var micros: Int64 = 1_795_430_465_000_000
        for _ in 0..<10_000 {
            micros += 1
            let text = CaptureTime.format(microseconds: micros)
            #expect(CaptureTime.microseconds(CaptureTime.parse(text)!) == micros)
        }
    }
}

@Suite("Capture files")
struct CaptureFileTests {
    let contents = Array(
        """
        {"t":"2026-11-22T10:41:05Z","topic":"a","payload":"1"}\r

        {"t":"2026-11-22T10:41:06Z","topic":"a","payload":"2","qos":5}
        {"t":"2026-11-22T10:41:07Z","topic":"a","payload":"3"}
        """.utf8)

    @Test("lines are numbered as in the file; blank lines and CRLF are fine")
    func numbering() {
        let lines = CaptureFile.lines(of: contents, name: "s.jsonl")
        #expect(lines.map(\.number) == [1, 3, 4])
        #expect(throws: CaptureFileError(file: "s.jsonl", line: 3, message: #""qos" must be 0, 1 or 2, not 5"#)) {
            try CaptureFile.records(of: contents, name: "s.jsonl")
        }
        #expect("\(CaptureFileError(file: "s.jsonl", line: 3, message: "m"))" == "s.jsonl:3: m")
    }

    @Test("bad lines can be skipped")
    func skipping() throws {
        let (records, skipped) = try CaptureFile.records(of: contents, name: "s.jsonl", skipBadLines: true)
        #expect(records.map(\.text) == ["1", "3"])
        #expect(skipped.map(\.line) == [3])
    }

    @Test("the diff names missing and unexpected lines")
    func diff() throws {
        #expect(CaptureDiff.diff(expected: ["a", "b"], actual: ["a", "b"]) == nil)
        let text = try #require(CaptureDiff.diff(expected: ["a", "b", "c", "d"], actual: ["a", "x", "c", "d", "e"]))
        #expect(
            text == """
                1 expected line(s) missing (-), 2 unexpected line(s) produced (+)
                @@ expected line 1, actual line 1 @@
                  a
                - b
                + x
                  c
                  d
                + e
                """)
    }
}
