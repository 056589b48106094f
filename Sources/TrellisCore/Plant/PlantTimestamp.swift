#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A small, locale-free ISO 8601 parser and formatter for sensor reports and dead letters.
///
/// Parses `YYYY-MM-DDTHH:MM:SS` followed by an optional fraction (1–9 digits) and a zone of
/// `Z` or `±hh:mm`; formats as UTC with exactly three fractional digits
/// (`2026-11-22T10:41:05.123Z`). Written by hand so output is identical on every platform.
enum PlantTimestamp {
    /// Parses an ISO 8601 date-time string, or returns `nil` if it is not one.
    static func parse(_ text: String) -> Date? {
        var scanner = PlantDigitScanner(bytes: Array(text.utf8))
        guard let year = scanner.number(4), scanner.expect(0x2D),
            let month = scanner.number(2), scanner.expect(0x2D),
            let day = scanner.number(2), scanner.expect(0x54),
            let hour = scanner.number(2), scanner.expect(0x3A),
            let minute = scanner.number(2), scanner.expect(0x3A),
            let second = scanner.number(2)
        else { return nil }
        guard (1...12).contains(month), (1...CivilCalendar.daysIn(year: year, month: month)).contains(day),
            (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second)
        else { return nil }

        var fraction = 0.0
        if scanner.expect(0x2E) {
            var numerator = 0
            var denominator = 1
            while let digit = scanner.number(1) {
                guard denominator < 1_000_000_000 else { return nil }
                numerator = numerator * 10 + digit
                denominator *= 10
            }
            guard denominator > 1 else { return nil }
            fraction = Double(numerator) / Double(denominator)
        }

        var offset = 0
        if scanner.expect(0x5A) {
            offset = 0
        } else if let sign = scanner.next(), sign == 0x2B || sign == 0x2D {
            guard let hours = scanner.number(2), scanner.expect(0x3A), let minutes = scanner.number(2),
                hours <= 23, minutes <= 59
            else { return nil }
            offset = (hours * 3600 + minutes * 60) * (sign == 0x2D ? -1 : 1)
        } else {
            return nil
        }
        guard scanner.atEnd else { return nil }

        let days = CivilCalendar.days(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// Formats `date` as UTC with millisecond precision, rounding to the nearest millisecond.
    static func format(_ date: Date) -> String {
        let totalMillis = Int((date.timeIntervalSince1970 * 1000).rounded())
        let millis = ((totalMillis % 1000) + 1000) % 1000
        let totalSeconds = (totalMillis - millis) / 1000
        let secondOfDay = ((totalSeconds % 86_400) + 86_400) % 86_400
        let days = (totalSeconds - secondOfDay) / 86_400
        let (year, month, day) = CivilCalendar.date(days: days)
        guard (0...9999).contains(year) else {
            return CivilCalendar.pad(year, 4) + "-" + CivilCalendar.pad(month, 2) + "-" + CivilCalendar.pad(day, 2)
                + "T"
                + CivilCalendar.pad(secondOfDay / 3600, 2) + ":" + CivilCalendar.pad(secondOfDay / 60 % 60, 2) + ":"
                + CivilCalendar.pad(secondOfDay % 60, 2) + "." + CivilCalendar.pad(millis, 3) + "Z"
        }
        // The common case, written into one 24-byte buffer: `YYYY-MM-DDThh:mm:ss.mmmZ`.
        var bytes = [UInt8](repeating: 0, count: 24)
        func digits(_ value: Int, _ width: Int, at offset: Int) {
            var value = value
            for position in stride(from: offset + width - 1, through: offset, by: -1) {
                bytes[position] = UInt8(0x30 + value % 10)
                value /= 10
            }
        }
        digits(year, 4, at: 0)
        digits(month, 2, at: 5)
        digits(day, 2, at: 8)
        digits(secondOfDay / 3600, 2, at: 11)
        digits(secondOfDay / 60 % 60, 2, at: 14)
        digits(secondOfDay % 60, 2, at: 17)
        digits(millis, 3, at: 20)
        for (offset, separator) in [(4, 0x2D), (7, 0x2D), (10, 0x54), (13, 0x3A), (16, 0x3A), (19, 0x2E), (23, 0x5A)]
            as [(Int, UInt8)]
        {
            bytes[offset] = separator
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A cursor over ASCII bytes used by ``PlantTimestamp``.
struct PlantDigitScanner {
    let bytes: [UInt8]
    var index = 0

    var atEnd: Bool { index == bytes.count }

    /// Consumes `byte` if it is next.
    mutating func expect(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Consumes and returns the next byte.
    mutating func next() -> UInt8? {
        guard index < bytes.count else { return nil }
        defer { index += 1 }
        return bytes[index]
    }

    /// Consumes exactly `count` decimal digits, or nothing.
    mutating func number(_ count: Int) -> Int? {
        guard index + count <= bytes.count else { return nil }
        var value = 0
        for byte in bytes[index..<(index + count)] {
            guard (0x30...0x39).contains(byte) else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        index += count
        return value
    }
}
