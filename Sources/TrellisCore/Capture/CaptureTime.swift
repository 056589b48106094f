#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Times in captures: ISO 8601 UTC with exactly six fractional digits
/// (`2026-11-22T10:41:05.123456Z`), kept as whole microseconds so a time read from a capture
/// and written back is the same text.
///
/// Parsing accepts 0–9 fractional digits (rounded to the microsecond) and a zone of `Z`,
/// `±hh:mm` or `±hhmm`. It also accepts what `mosquitto_sub -F '%j'` prints in its `tst`
/// field: the local time followed by `Z` and the numeric offset (`2026-11-22T11:41:05.123456Z+0100`),
/// where the offset, not the `Z`, is what holds.
public enum CaptureTime {
    /// Formats `date` in UTC with six fractional digits, rounded to the nearest microsecond.
    public static func format(_ date: Date) -> String {
        format(microseconds: microseconds(date))
    }

    /// Formats a number of microseconds since 1970 in UTC.
    public static func format(microseconds total: Int64) -> String {
        let micros = Int(((total % 1_000_000) + 1_000_000) % 1_000_000)
        let seconds = Int((total - Int64(micros)) / 1_000_000)
        let secondOfDay = ((seconds % 86_400) + 86_400) % 86_400
        let days = (seconds - secondOfDay) / 86_400
        let (year, month, day) = CivilCalendar.date(days: days)
        return CivilCalendar.pad(year, 4) + "-" + CivilCalendar.pad(month, 2) + "-" + CivilCalendar.pad(day, 2) + "T"
            + CivilCalendar.pad(secondOfDay / 3600, 2) + ":" + CivilCalendar.pad(secondOfDay / 60 % 60, 2) + ":"
            + CivilCalendar.pad(secondOfDay % 60, 2)
            + "." + CivilCalendar.pad(micros, 6) + "Z"
    }

    /// Microseconds since 1970, the resolution every capture time has.
    public static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    /// The date of a number of microseconds since 1970.
    public static func date(microseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }

    /// `date` rounded to the microsecond, as a capture keeps it.
    public static func normalized(_ date: Date) -> Date {
        self.date(microseconds: microseconds(date))
    }

    /// Parses a capture time, or returns nil when `text` is not one.
    public static func parse(_ text: String) -> Date? {
        parseMicroseconds(text).map { date(microseconds: $0) }
    }

    /// Parses a capture time into microseconds since 1970.
    public static func parseMicroseconds(_ text: String) -> Int64? {
        var bytes = Array(text.utf8)[...]
        func number(_ width: Int) -> Int? {
            guard bytes.count >= width else { return nil }
            var value = 0
            for byte in bytes.prefix(width) {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            bytes = bytes.dropFirst(width)
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard bytes.first == byte else { return false }
            bytes = bytes.dropFirst()
            return true
        }
        guard let year = number(4), expect(0x2D), let month = number(2), expect(0x2D), let day = number(2),
            expect(0x54) || expect(0x74) || expect(0x20),
            let hour = number(2), expect(0x3A), let minute = number(2), expect(0x3A), let second = number(2),
            (1...12).contains(month), (1...CivilCalendar.daysIn(year: year, month: month)).contains(day),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }

        var micros: Int64 = 0
        if expect(0x2E) {
            var digits = 0
            var nanos: Int64 = 0
            while let first = bytes.first, (0x30...0x39).contains(first) {
                guard digits < 9 else { return nil }
                nanos = nanos * 10 + Int64(first - 0x30)
                digits += 1
                bytes = bytes.dropFirst()
            }
            guard digits > 0 else { return nil }
            for _ in digits..<9 { nanos *= 10 }
            micros = (nanos + 500) / 1000
        }

        var offset = 0
        let zulu = expect(0x5A) || expect(0x7A)
        if let sign = bytes.first, sign == 0x2B || sign == 0x2D {
            bytes = bytes.dropFirst()
            guard let hours = number(2) else { return nil }
            _ = expect(0x3A)
            guard let minutes = number(2), hours <= 23, minutes <= 59 else { return nil }
            offset = (hours * 3600 + minutes * 60) * (sign == 0x2D ? -1 : 1)
        } else if !zulu {
            return nil
        }
        guard bytes.isEmpty else { return nil }

        let seconds =
            Int64(CivilCalendar.days(year: year, month: month, day: day)) * 86_400
            + Int64(hour * 3600 + minute * 60 + second - offset)
        return seconds * 1_000_000 + micros
    }

}
