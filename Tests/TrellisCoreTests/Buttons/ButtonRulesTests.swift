import Foundation
import Testing
@testable import TrellisCore

@Suite("Button ids, press payloads and statuses")
struct ButtonRulesTests {
    @Test("ids", arguments: [
        ("door", true), ("küche", true), ("a b", true), (String(repeating: "x", count: 64), true),
        ("", false), (String(repeating: "x", count: 65), false), ("a/b", false), ("a+b", false), ("a#b", false),
        ("nul\u{0}", false), ("tab\t", false),
    ])
    func identifiers(id: String, valid: Bool) throws {
        let result = ButtonIdentifier.validate(id)
        if valid {
            #expect(try result.get() == id)
        } else {
            #expect(throws: IdentifierError.self) { try result.get() }
        }
    }

    @Test("ids given as bytes are trimmed, and invalid UTF-8 is refused with a sentence")
    func identifierBytes() throws {
        #expect(try ButtonIdentifier.validate(Array(" door\n".utf8)).get() == "door")
        guard case let .failure(error) = ButtonIdentifier.validate([0xff, 0xfe]) else {
            Issue.record("invalid UTF-8 accepted")
            return
        }
        #expect(error.message == "the button id is not valid UTF-8 text")
        guard case let .failure(long) = ButtonIdentifier.validate(String(repeating: "y", count: 70), kind: "client id") else {
            Issue.record("a 70-character id accepted")
            return
        }
        #expect(long.message == "the client id has 70 characters; at most 64 are allowed")
    }

    @Test("press payloads", arguments: [
        ("", Optional<Double>.none, Optional<PressRejection>.none),
        ("   \n", nil, nil),
        ("2026-11-22T10:41:05Z", 1_795_344_065, nil),
        ("2026-11-22T10:41:05.250Z", 1_795_344_065.25, nil),
        ("2026-11-22T11:41:05+01:00", 1_795_344_065, nil),
        ("yesterday", nil, .invalidTime),
        ("2026-13-01T00:00:00Z", nil, .invalidTime),
        (String(repeating: "9", count: 300), nil, .tooLarge),
    ])
    func presses(payload: String, seconds: Double?, rejection: PressRejection?) {
        switch PressPayload.parse(Array(payload.utf8)) {
        case let .success(date):
            #expect(rejection == nil)
            #expect(date?.timeIntervalSince1970 == seconds)
        case let .failure(reason):
            #expect(reason == rejection)
        }
    }

    @Test("a press payload that is not UTF-8 is refused")
    func pressNotUTF8() {
        guard case .failure(.invalidUTF8) = PressPayload.parse([0xc3, 0x28]) else {
            Issue.record("invalid UTF-8 accepted as a press")
            return
        }
    }

    @Test("client statuses", arguments: [("online", ClientStatus.online), ("offline\n", .offline), ("Online", nil), ("", nil)])
    func statuses(payload: String, status: ClientStatus?) {
        #expect(ClientStatus(payload: Array(payload.utf8)) == status)
    }
}

@Suite("Button payloads")
struct ButtonPayloadTests {
    static let first = Date(timeIntervalSince1970: 1_795_344_065.123)
    static let second = Date(timeIntervalSince1970: 1_795_344_066)

    @Test("each payload's exact bytes")
    func renderers() {
        #expect(String(decoding: ButtonPayloads.connectionSuccess(), as: UTF8.self) == #"{"status":"success"}"#)
        #expect(String(decoding: ButtonPayloads.failure("no"), as: UTF8.self) == #"{"error":"no","status":"failed"}"#)
        #expect(String(decoding: ButtonPayloads.registerSuccess(button: nil, missed: 0), as: UTF8.self) == #"{"status":"success"}"#)
        let state = ButtonState(id: "door", total: 7, history: [Self.first, Self.second])
        #expect(String(decoding: ButtonPayloads.registerSuccess(button: state, missed: 5), as: UTF8.self)
            == #"{"button":{"count":5,"history":["2026-11-22T10:41:05.123Z","2026-11-22T10:41:06.000Z"],"id":"door"},"status":"success"}"#)
        #expect(String(decoding: ButtonPayloads.state(state), as: UTF8.self)
            == #"{"history":["2026-11-22T10:41:05.123Z","2026-11-22T10:41:06.000Z"],"id":"door","total":7}"#)
    }

    @Test("times are UTC with milliseconds", arguments: [
        (0.0, "1970-01-01T00:00:00.000Z"), (1_709_164_800.5, "2024-02-29T00:00:00.500Z"),
        (-86_400.25, "1969-12-30T23:59:59.750Z"), (1_795_344_065.123, "2026-11-22T10:41:05.123Z"),
    ])
    func iso8601(seconds: Double, text: String) {
        #expect(ISO8601Time.format(Date(timeIntervalSince1970: seconds)) == text)
        #expect(ISO8601Time.parse(text)?.timeIntervalSince1970 == seconds)
    }
}
