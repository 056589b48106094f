#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How a history is answered, decided before the store is read: from which rows (raw readings,
/// or hours) and in buckets of which width, so that the answer has at most ``maxPoints`` points
/// whatever range is asked for.
///
/// Raw readings answer when the whole range lies within the raw retention and the step is under
/// an hour; each bucket then holds the readings of `width` milliseconds from ``origin``. Otherwise
/// the answer is hourly: the origin moves back to its hour, the width is a whole number of hours,
/// and each bucket folds its hours (and the raw readings not folded yet, which lie in their hours).
public struct HistoryPlan: Sendable, Equatable {
    public enum Resolution: String, Sendable, Equatable {
        case raw, hourly
    }

    /// Most points one answer holds.
    public static let maxPoints: Int64 = 1000
    public static let hourMilliseconds: Int64 = 3_600_000
    public static let dayMilliseconds: Int64 = 86_400_000

    public var resolution: Resolution
    /// The first bucket's start, in milliseconds since 1970.
    public var origin: Int64
    /// The end of the range (excluded), in milliseconds since 1970.
    public var end: Int64
    /// Each bucket's width in milliseconds: a whole number of seconds, of hours when hourly.
    public var width: Int64

    /// The plan for readings from `from` to `to` in buckets of at least `step` seconds (nil: as
    /// fine as ``maxPoints`` allows), raw readings being kept from `rawSince` on.
    public init(from: Date, to: Date, step: Int?, rawSince: Date) {
        let start = ISO8601Time.milliseconds(from)
        let end = max(ISO8601Time.milliseconds(to), start + 1)
        let fewest = Self.ceil(end - start, Self.maxPoints)
        var width = Self.ceil(max(fewest, Int64(step ?? 1) * 1000, 1000), 1000) * 1000
        if start >= ISO8601Time.milliseconds(rawSince), width < Self.hourMilliseconds {
            self.init(resolution: .raw, origin: start, end: end, width: width)
            return
        }
        let origin = Self.hourStart(start)
        width = max(width, Self.ceil(end - origin, Self.maxPoints))
        width = Self.ceil(width, Self.hourMilliseconds) * Self.hourMilliseconds
        self.init(resolution: .hourly, origin: origin, end: end, width: width)
    }

    public init(resolution: Resolution, origin: Int64, end: Int64, width: Int64) {
        self.resolution = resolution
        self.origin = origin
        self.end = end
        self.width = width
    }

    /// The width in whole seconds, as an answer states its step.
    public var step: Int { Int(width / 1000) }

    /// The start of the hour `milliseconds` lies in, as the stores compute it (`at - at % 3600000`).
    public static func hourStart(_ milliseconds: Int64) -> Int64 {
        milliseconds - milliseconds % hourMilliseconds
    }

    /// `a / b` rounded up, for positive `b`.
    static func ceil(_ a: Int64, _ b: Int64) -> Int64 {
        a <= 0 ? 0 : (a + b - 1) / b
    }
}

/// A history asked for: whose, from when to when, and the finest step wanted (seconds).
public struct HistoryRequest: Sendable, Equatable {
    public var subject: HistorySubject
    public var from: Date
    /// The end of the range; nil: the time the request is answered.
    public var to: Date?
    public var step: Int?

    /// Times outside these are refused: before them no reading was taken, after them none will be
    /// for a long while, and a range beyond them only asks the store for nothing at length.
    public static let earliest = Date(timeIntervalSince1970: 0)
    public static let latest = Date(timeIntervalSince1970: 4_102_444_800) // 2100-01-01T00:00:00Z
    /// The coarsest step one may ask for: a year, in seconds.
    public static let maxStep = 366 * 86_400

    public init(subject: HistorySubject, from: Date, to: Date?, step: Int?) {
        self.subject = subject
        self.from = from
        self.to = to
        self.step = step
    }
}
