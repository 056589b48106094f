import Foundation

/// A daily span of local time during which a rule's notifications wait, such as `22:00-07:00`
/// (across midnight) or `12:00-13:30`.
public struct QuietHours: Sendable, Hashable, CustomStringConvertible {
    /// Minutes after local midnight where the span starts and ends (end excluded).
    public var start: Int, end: Int

    public init(start: Int, end: Int) {
        (self.start, self.end) = (start, end)
    }

    /// `HH:MM-HH:MM`, or nil when `text` is not that with a start unlike the end.
    public init?(parsing text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let start = Self.minutes(parts[0]), let end = Self.minutes(parts[1]), start != end
        else { return nil }
        (self.start, self.end) = (start, end)
    }

    private static func minutes(_ text: Substring) -> Int? {
        let fields = text.trimmingCharacters(in: .whitespaces).split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 2, fields[0].count == 2, fields[1].count == 2, let hour = Int(fields[0]),
            let minute = Int(fields[1]), (0..<24).contains(hour), (0..<60).contains(minute)
        else { return nil }
        return hour * 60 + minute
    }

    public var description: String {
        func text(_ minutes: Int) -> String {
            let (hour, minute) = (minutes / 60, minutes % 60)
            return (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
        }
        return "\(text(start))-\(text(end))"
    }

    /// When a notification made at `date` may go: `date` itself outside the span, else the
    /// span's end, in `calendar`'s time zone.
    public func release(of date: Date, calendar: Calendar) -> Date {
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        let now = (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
        let inside = start < end ? (start..<end).contains(now) : (now >= start || now < end)
        guard inside else { return date }
        let midnight = calendar.startOfDay(for: date)
        let day =
            start < end || now < end ? midnight : calendar.date(byAdding: .day, value: 1, to: midnight) ?? midnight
        return calendar.date(byAdding: .minute, value: end, to: day) ?? date
    }
}
