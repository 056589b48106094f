#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// ISO 8601 times as every Trellis payload writes them: UTC, `Z`, milliseconds
/// (`2026-11-22T10:41:05.123Z`); parsing accepts any fraction and `Z` or `±hh:mm` offsets.
public enum ISO8601Time {
    /// Formats `date` in UTC with exactly three fractional digits.
    public static func format(_ date: Date) -> String {
        PlantTimestamp.format(date)
    }

    /// Parses an ISO 8601 date-time, or returns nil when `text` is not one.
    public static func parse(_ text: String) -> Date? {
        PlantTimestamp.parse(text)
    }

    /// Milliseconds since 1970, the resolution every stored time has.
    public static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}
