import Foundation
import Testing
@testable import TrellisCore

@Suite("Button and client ids")
struct ButtonIdentifierTests {
    static let too = "at most 64 are allowed"

    @Test(
        "ids: accepted ones come back unchanged, refused ones with their sentence",
        arguments: [
            ("door", nil),
            ("küche", nil),
            ("a b", nil),
            ("🔔", nil),
            (String(repeating: "x", count: 64), nil),
            (String(repeating: "ü", count: 64), nil),
            ("", "the button id is empty"),
            (String(repeating: "x", count: 65), "the button id has 65 characters; \(too)"),
            (String(repeating: "ü", count: 65), "the button id has 65 characters; \(too)"),
            ("a/b", "the button id contains '/', which cannot be part of an MQTT topic level"),
            ("a+b", "the button id contains '+', which cannot be part of an MQTT topic level"),
            ("#", "the button id contains '#', which cannot be part of an MQTT topic level"),
            ("nul\u{0}", "the button id contains a control character"),
            ("tab\t", "the button id contains a control character"),
            ("del\u{7f}", "the button id contains a control character"),
            ("c1\u{85}", "the button id contains a control character"),
            (" door", "the button id starts or ends with a space"),
            ("door ", "the button id starts or ends with a space")
        ] as [(String, String?)])
    func identifiers(id: String, refusal: String?) {
        switch ButtonIdentifier.validate(id) {
        case let .success(valid):
            #expect(refusal == nil)
            #expect(valid == id)
        case let .failure(error):
            #expect(error.message == refusal)
            #expect(error.description == refusal)
        }
    }

    @Test(
        "ids given as payload bytes are trimmed; invalid UTF-8 is refused",
        arguments: [
            (Array(" door\n".utf8), "door", nil),
            (Array("door\r\n".utf8), "door", nil),
            (Array("küche".utf8), "küche", nil),
            (Array("\t\r\n".utf8), nil, "the client id is empty"),
            ([], nil, "the client id is empty"),
            ([0xff, 0xfe], nil, "the client id is not valid UTF-8 text"),
            ([0x64, 0xc3], nil, "the client id is not valid UTF-8 text"),
            ([0x61, 0x00, 0x62], nil, "the client id contains a control character"),
            (Array(String(repeating: "y", count: 70).utf8), nil, "the client id has 70 characters; \(too)")
        ] as [([UInt8], String?, String?)])
    func identifierBytes(payload: [UInt8], id: String?, refusal: String?) {
        switch ButtonIdentifier.validate(payload, kind: "client id") {
        case let .success(valid):
            #expect(valid == id)
            #expect(refusal == nil)
        case let .failure(error):
            #expect(id == nil)
            #expect(error.message == refusal)
        }
    }
}

@Suite("Press payloads and client statuses")
struct PressPayloadTests {
    @Test(
        "press payloads",
        arguments: [
            ("", nil, nil),
            ("   \n", nil, nil),
            ("2026-11-22T10:41:05Z", 1_795_344_065, nil),
            (" 2026-11-22T10:41:05Z\n", 1_795_344_065, nil),
            ("2026-11-22T10:41:05Z\r\n", 1_795_344_065, nil),
            ("\r\n", nil, nil),
            ("2026-11-22T10:41:05.250Z", 1_795_344_065.25, nil),
            ("2026-11-22T10:41:05.5+00:00", 1_795_344_065.5, nil),
            ("2026-11-22T11:41:05+01:00", 1_795_344_065, nil),
            ("2026-11-22T05:11:05-05:30", 1_795_344_065, nil),
            ("1969-07-20T20:17:40Z", -14_182_940, nil),
            ("2024-02-29T00:00:00Z", 1_709_164_800, nil),
            ("yesterday", nil, .invalidTime),
            ("1795344065", nil, .invalidTime),
            ("2026-11-22T10:41:05", nil, .invalidTime),
            ("2026-11-22 10:41:05Z", nil, .invalidTime),
            ("2026-11-22T10:41:05z", nil, .invalidTime),
            ("2026-11-22T10:41:05.Z", nil, .invalidTime),
            ("2026-11-22T10:41:05+0100", nil, .invalidTime),
            ("2026-13-01T00:00:00Z", nil, .invalidTime),
            ("2025-02-29T00:00:00Z", nil, .invalidTime),
            ("2026-11-22T24:00:00Z", nil, .invalidTime),
            ("{\"at\":\"2026-11-22T10:41:05Z\"}", nil, .invalidTime),
            (String(repeating: "9", count: 256), nil, .invalidTime),
            (String(repeating: "9", count: 257), nil, .tooLarge),
            (String(repeating: " ", count: 300), nil, .tooLarge)
        ] as [(String, Double?, PressRejection?)])
    func presses(payload: String, seconds: Double?, rejection: PressRejection?) {
        switch PressPayload.parse(Array(payload.utf8)) {
        case let .success(date):
            #expect(rejection == nil)
            #expect(date?.timeIntervalSince1970 == seconds)
        case let .failure(reason):
            #expect(reason == rejection)
        }
    }

    @Test(
        "a press payload that is not UTF-8 is refused",
        arguments: [[0xc3, 0x28], [0xff], [0x32, 0x30, 0x80]] as [[UInt8]])
    func pressNotUTF8(payload: [UInt8]) {
        guard case .failure(.invalidUTF8) = PressPayload.parse(payload) else {
            Issue.record("invalid UTF-8 accepted as a press")
            return
        }
    }

    @Test("rejections are the dead-letter reasons")
    func rejectionReasons() {
        #expect(PressRejection.allCases.map(\.rawValue) == ["too_large", "invalid_utf8", "invalid_press_time"])
        #expect(PressPayload.maximumSize == 256)
    }

    @Test(
        "client statuses",
        arguments: [
            ("online", ClientStatus.online), ("offline", .offline), ("offline\n", .offline), ("online\r\n", .online),
            (" online ", .online),
            ("Online", nil), ("ONLINE", nil), ("", nil), ("on line", nil), ("1", nil), ("true", nil),
            ("{\"status\":\"online\"}", nil)
        ] as [(String, ClientStatus?)])
    func statuses(payload: String, status: ClientStatus?) {
        #expect(ClientStatus(payload: Array(payload.utf8)) == status)
    }

    @Test("a status that is not UTF-8 is no status")
    func statusNotUTF8() {
        #expect(ClientStatus(payload: [0x6f, 0x6e, 0xff]) == nil)
    }
}
