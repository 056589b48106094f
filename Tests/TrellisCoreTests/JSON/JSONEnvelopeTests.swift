import Foundation
import Testing
import TrellisCore

@Suite("JSON services: request envelope")
struct JSONRequestTests {
    @Test("an empty or blank payload is {}", arguments: ["", " ", "\r\n", "\t \n"])
    func emptyIsEmptyObject(_ text: String) throws {
        #expect(try JSONRequest.parse(Array(text.utf8)).get() == JSONRequest())
    }

    @Test(
        "members and the transaction are read",
        arguments: [
            (#"{"id":"a"}"#, ["id": JSONValue.string("a")], nil as JSONValue?),
            (#"{"id":"a","transaction":"t-1"}"#, ["id": .string("a")], .string("t-1")),
            (#"{"transaction":42}"#, [:], .integer(42)),
            (#"{"transaction":1.5,"limit":3}"#, ["limit": .integer(3)], .number(1.5)),
            (
                #"{"nested":{"a":[1,true,null]}}"#,
                ["nested": .object(["a": .array([.integer(1), .bool(true), .null])])], nil
            )
        ])
    func members(_ text: String, _ members: [String: JSONValue], _ transaction: JSONValue?) throws {
        #expect(
            try JSONRequest.parse(Array(text.utf8)).get() == JSONRequest(members: members, transaction: transaction))
    }

    @Test(
        "what is not a UTF-8 JSON object is invalid_json",
        arguments: [
            ([0xFF, 0xFE], "the payload is not valid UTF-8 text"),
            (Array("{nope".utf8), "the payload is not valid JSON"),
            (Array("[1,2]".utf8), "the payload is an array, not a JSON object"),
            (Array("\"text\"".utf8), "the payload is a string, not a JSON object"),
            (Array("42".utf8), "the payload is a number, not a JSON object"),
            (Array("{\"a\":1}x".utf8), "the payload is not valid JSON")
        ])
    func invalidJSON(_ payload: [UInt8], _ message: String) {
        #expect(JSONRequest.parse(payload) == .failure(JSONServiceError(.invalidJSON, message)))
    }

    @Test("a transaction that is not a string or number is invalid_request", arguments: ["true", "null", "[1]", "{}"])
    func badTransaction(_ value: String) {
        guard case let .failure(error) = JSONRequest.parse(Array(#"{"transaction":\#(value)}"#.utf8)) else {
            Issue.record("accepted")
            return
        }
        #expect(error.code == .invalidRequest)
        #expect(error.message.contains("\"transaction\""))
    }

    @Test("deeply nested input is refused, not a crash")
    func deepNesting() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONServiceError.self) { try JSONRequest.parse(Array("{\"a\":\(deep)}".utf8)).get() }
    }
}

@Suite("JSON services: reply envelope")
struct JSONEnvelopeTests {
    struct Data: Encodable { var b = 2; var a = "x/y" }

    @Test(
        "ok replies have sorted keys, unescaped slashes and echo the transaction",
        arguments: [
            (nil as JSONValue?, #"{"data":{"a":"x/y","b":2},"status":"ok"}"#),
            (.string("t1"), #"{"data":{"a":"x/y","b":2},"status":"ok","transaction":"t1"}"#),
            (.integer(7), #"{"data":{"a":"x/y","b":2},"status":"ok","transaction":7}"#),
            (.number(2.5), #"{"data":{"a":"x/y","b":2},"status":"ok","transaction":2.5}"#)
        ])
    func ok(_ transaction: JSONValue?, _ expected: String) {
        #expect(String(decoding: JSONEnvelope.ok(Data(), transaction: transaction), as: UTF8.self) == expected)
    }

    @Test("error replies carry the code and the sentence", arguments: JSONErrorCode.allCases)
    func error(_ code: JSONErrorCode) {
        let bytes = JSONEnvelope.error(JSONServiceError(code, "it \"failed\""), transaction: .string("t"))
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"{"code":"\#(code.rawValue)","error":"it \"failed\"","status":"error","transaction":"t"}"#)
    }

    @Test("the stable codes")
    func codes() {
        #expect(
            JSONErrorCode.allCases.map(\.rawValue) == [
                "invalid_json", "invalid_request", "not_found", "conflict", "not_editable", "too_large",
                "unknown_action", "forbidden", "internal_error", "busy", "rate_limited"
            ])
    }

    @Test("request and response topics, shared and per client")
    func topics() {
        let topics = JSONTopics(prefix: "trellis")
        #expect(topics.request(service: "devices", action: "list") == "trellis/request/devices/list")
        #expect(topics.response(service: "devices", action: "list") == "trellis/response/devices/list")
        #expect(
            topics.request(service: "models", action: "get", client: "bob") == "trellis/clients/bob/request/models/get")
        #expect(
            topics.response(service: "models", action: "get", client: "bob")
                == "trellis/clients/bob/response/models/get")
    }

    @Test("JSON values round-trip through the encoder with sorted keys")
    func valueRoundTrip() throws {
        let text = #"{"a":[1,2.5,"s",null,false],"b":{"c":-3}}"#
        let value = try JSONDecoder().decode(JSONValue.self, from: Foundation.Data(text.utf8))
        #expect(String(decoding: JSONEnvelope.encode(value), as: UTF8.self) == text)
        #expect(JSONValue.number(3.0).integerValue == 3)
        #expect(JSONValue.number(3.5).integerValue == nil)
        #expect(JSONValue.string("3").integerValue == nil)
    }

    static let valueCases: [(String, JSONValue?)] = [
        ("null", JSONValue.null),
        (#""true""#, .string("true")),
        (#""5""#, .string("5")),
        ("true", .bool(true)),
        ("5", .integer(5)),
        ("-9223372036854775808", .integer(.min)),
        ("5.5", .number(5.5)),
        ("1e400", nil),
        ("{}", .object([:])),
        ("[]", .array([])),
        (#"[{"a":[]}]"#, .array([.object(["a": .array([])])]))
    ]

    @Test("each JSON type decodes to its own case, whatever the order the decoder tries them in", arguments: valueCases)
    func valueTypes(_ text: String, _ expected: JSONValue?) {
        let decoded = try? JSONDecoder().decode(JSONValue.self, from: Foundation.Data(text.utf8))
        #expect(decoded == expected)
    }
}
