import Foundation
import Testing
@testable import TrellisCore

@Suite("ISO 8601 times")
struct ISO8601TimeTests {
    @Test(
        "format and parse are inverse at millisecond resolution",
        arguments: [
            (0.0, "1970-01-01T00:00:00.000Z"),
            (0.001, "1970-01-01T00:00:00.001Z"),
            (-0.001, "1969-12-31T23:59:59.999Z"),
            (1_709_164_800.5, "2024-02-29T00:00:00.500Z"),
            (951_827_696, "2000-02-29T12:34:56.000Z"),
            (-86_400.25, "1969-12-30T23:59:59.750Z"),
            (-14_182_940, "1969-07-20T20:17:40.000Z"),
            (-2_208_988_800, "1900-01-01T00:00:00.000Z"),
            (1_795_344_065.123, "2026-11-22T10:41:05.123Z"),
            (4_102_444_799.999, "2099-12-31T23:59:59.999Z")
        ])
    func roundTrip(seconds: Double, text: String) throws {
        let date = Date(timeIntervalSince1970: seconds)
        #expect(ISO8601Time.format(date) == text)
        let parsed = try #require(ISO8601Time.parse(text))
        #expect(ISO8601Time.milliseconds(parsed) == ISO8601Time.milliseconds(date))
        #expect(ISO8601Time.format(parsed) == text)
    }

    @Test(
        "formatting rounds to the nearest millisecond",
        arguments: [
            (1_000.0004, "1970-01-01T00:16:40.000Z"),
            (1_000.0006, "1970-01-01T00:16:40.001Z"),
            (1_000.9996, "1970-01-01T00:16:41.000Z"),
            (-0.0004, "1970-01-01T00:00:00.000Z")
        ])
    func rounding(seconds: Double, text: String) {
        #expect(ISO8601Time.format(Date(timeIntervalSince1970: seconds)) == text)
    }

    @Test(
        "parsing accepts any fraction of 1–9 digits and Z or ±hh:mm",
        arguments: [
            ("2026-11-22T10:41:05Z", "2026-11-22T10:41:05.000Z"),
            ("2026-11-22T10:41:05.1Z", "2026-11-22T10:41:05.100Z"),
            ("2026-11-22T10:41:05.123456789Z", "2026-11-22T10:41:05.123Z"),
            ("2026-11-22T10:41:05.9996Z", "2026-11-22T10:41:06.000Z"),
            ("2026-11-22T11:41:05+01:00", "2026-11-22T10:41:05.000Z"),
            ("2026-11-22T05:11:05.5-05:30", "2026-11-22T10:41:05.500Z"),
            ("2026-01-01T00:30:00+01:00", "2025-12-31T23:30:00.000Z"),
            ("1970-01-01T00:00:00-00:01", "1970-01-01T00:01:00.000Z"),
            ("2024-02-29T23:59:59.999Z", "2024-02-29T23:59:59.999Z"),
            ("1600-02-29T00:00:00Z", "1600-02-29T00:00:00.000Z")
        ])
    func parsing(text: String, normalized: String) throws {
        let date = try #require(ISO8601Time.parse(text))
        #expect(ISO8601Time.format(date) == normalized)
    }

    @Test(
        "parsing refuses what is not a date-time",
        arguments: [
            "", "2026-11-22", "2026-11-22T10:41Z", "2026-11-22T10:41:05", "2026-11-22T10:41:05.Z",
            "2026-11-22T10:41:05.1234567890Z", "2026-11-22t10:41:05Z", "2026-11-22T10:41:05z", "2026-11-22T10:41:05+01",
            "2026-11-22T10:41:05+0100", "2026-11-22T10:41:05+24:00", "2026-11-22T10:41:05Z ", " 2026-11-22T10:41:05Z",
            "2026-00-10T00:00:00Z", "2026-04-31T00:00:00Z", "2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z",
            "2100-02-29T00:00:00Z", "2026-11-22T24:00:00Z", "2026-11-22T23:60:00Z", "2026-11-22T23:59:60Z",
            "26-11-22T10:41:05Z", "+2026-11-22T10:41:05Z", "２０２６-11-22T10:41:05Z", "1795344065"
        ])
    func refusals(text: String) {
        #expect(ISO8601Time.parse(text) == nil)
    }

    @Test(
        "milliseconds since 1970, rounded",
        arguments: [
            (0.0, 0), (1.0006, 1_001), (-0.001, -1), (1_795_344_065.123, 1_795_344_065_123)
        ] as [(Double, Int64)])
    func milliseconds(seconds: Double, millis: Int64) {
        #expect(ISO8601Time.milliseconds(Date(timeIntervalSince1970: seconds)) == millis)
    }
}
