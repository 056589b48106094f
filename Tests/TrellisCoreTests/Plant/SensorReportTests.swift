import Testing
@testable import TrellisCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

private func decode(_ text: String) -> Result<SensorReport, SensorReportRejection> {
    SensorReport.decode(Array(text.utf8))
}

@Suite("SensorReport decoding")
struct SensorReportTests {
    @Test(
        "valid reports",
        arguments: [
            (#"{"moisture":5,"temperature":71.5}"#, SensorReport(moisture: 5, temperature: 71.5)),
            (#" { "temperature" : 68 , "moisture" : 1 } "#, SensorReport(moisture: 1, temperature: 68)),
            (#"{"moisture":10,"temperature":200}"#, SensorReport(moisture: 10, temperature: 200)),
            (#"{"moisture":5.0,"temperature":-100}"#, SensorReport(moisture: 5, temperature: -100)),
            (
                #"{"moisture":3,"temperature":-0.5,"battery":"low","extra":[1,{"x":null}]}"#,
                SensorReport(moisture: 3, temperature: -0.5)
            ),
            (#"{"moisture":3,"temperature":70,"at":null}"#, SensorReport(moisture: 3, temperature: 70)),
            (
                #"{"moisture":7,"temperature":70.25,"at":"2026-11-22T10:41:05Z"}"#,
                SensorReport(moisture: 7, temperature: 70.25, at: Date(timeIntervalSince1970: 1_795_344_065))
            ),
            (
                #"{"moisture":7,"temperature":70,"at":"2026-11-22T12:41:05.5+02:00"}"#,
                SensorReport(moisture: 7, temperature: 70, at: Date(timeIntervalSince1970: 1_795_344_065.5))
            ),
            (#"{"moisture":2,"temperature":1e2}"#, SensorReport(moisture: 2, temperature: 100))
        ])
    func valid(_ json: String, _ expected: SensorReport) {
        #expect(decode(json) == .success(expected))
    }

    @Test(
        "rejections name their reason",
        arguments: [
            (#"{"moisture":11,"temperature":70}"#, "moisture_out_of_range"),
            (#"{"moisture":0,"temperature":70}"#, "moisture_out_of_range"),
            (#"{"moisture":-1,"temperature":70}"#, "moisture_out_of_range"),
            (#"{"moisture":5.5,"temperature":70}"#, "moisture_not_integer"),
            (#"{"moisture":"5","temperature":70}"#, "invalid_moisture"),
            (#"{"moisture":true,"temperature":70}"#, "invalid_moisture"),
            (#"{"moisture":null,"temperature":70}"#, "invalid_moisture"),
            (#"{"moisture":[5],"temperature":70}"#, "invalid_moisture"),
            (#"{"temperature":70}"#, "missing_moisture"),
            (#"{"Moisture":5,"temperature":70}"#, "missing_moisture"),
            (#"{"moisture":5}"#, "missing_temperature"),
            (#"{"moisture":5,"temperature":"70"}"#, "invalid_temperature"),
            (#"{"moisture":5,"temperature":false}"#, "invalid_temperature"),
            (#"{"moisture":5,"temperature":200.1}"#, "temperature_out_of_range"),
            (#"{"moisture":5,"temperature":-100.5}"#, "temperature_out_of_range"),
            (#"{"moisture":5,"temperature":1e300}"#, "temperature_out_of_range"),
            (#"{"moisture":5,"temperature":70,"at":5}"#, "invalid_at"),
            (#"{"moisture":5,"temperature":70,"at":"yesterday"}"#, "invalid_at"),
            (#"{"moisture":5,"temperature":70,"at":"2026-13-01T00:00:00Z"}"#, "invalid_at"),
            (#"{"moisture":5,"temperature":70,"at":"2026-11-22T10:41:05"}"#, "invalid_at"),
            (#"{"moisture":5,"temperature":70,"at":""}"#, "invalid_at"),
            ("", "invalid_json"),
            ("not json", "invalid_json"),
            (#"{"moisture":5,"temperature":70"#, "invalid_json"),
            (#"{"moisture":5,"temperature":NaN}"#, "invalid_json"),
            ("[1,2]", "not_an_object"),
            ("5", "not_an_object"),
            ("null", "not_an_object"),
            (#""moisture""#, "not_an_object")
        ])
    func rejections(_ json: String, _ reason: String) {
        guard case .failure(let rejection) = decode(json) else {
            Issue.record("expected rejection for \(json)")
            return
        }
        #expect(rejection.reason == reason)
    }

    @Test(
        "invalid UTF-8 is rejected before JSON parsing",
        arguments: [
            [0xFF], [0x7B, 0xC3, 0x7D], Array(#"{"moisture":5,"temperature":70,"x":""#.utf8) + [0xFE, 0x22, 0x7D]
        ] as [[UInt8]])
    func invalidUTF8(_ bytes: [UInt8]) {
        #expect(SensorReport.decode(bytes) == .failure(.invalidUTF8))
    }

    @Test("deeply nested or large payloads are handled without crashing")
    func hostilePayloads() {
        let deepMember =
            #"{"moisture":5,"temperature":70,"x":"# + String(repeating: "[", count: 400)
            + String(repeating: "]", count: 400) + "}"
        #expect(decode(deepMember) == .success(SensorReport(moisture: 5, temperature: 70)))
        let tooDeep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(decode(tooDeep) == .failure(.invalidJSON))
        let padding = String(repeating: "x", count: 100 * 1024)
        #expect(
            decode(#"{"pad":"\#(padding)","moisture":2,"temperature":50}"#)
                == .success(SensorReport(moisture: 2, temperature: 50)))
    }

    @Test("reason strings are unique and snake_case")
    func reasonStrings() {
        let reasons = SensorReportRejection.allCases.map(\.reason)
        #expect(Set(reasons).count == reasons.count)
        #expect(reasons.allSatisfy { $0.allSatisfy { $0.isLowercase || $0 == "_" || $0.isNumber } })
        #expect(SensorReportRejection.invalidUTF8.reason == "invalid_utf8")
        #expect(SensorReportRejection.invalidJSON.reason == "invalid_json")
    }
}
