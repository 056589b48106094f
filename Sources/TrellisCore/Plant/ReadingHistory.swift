#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Whose readings a history is of: a plant (its sensors' readings together, the plant's sensors
/// as they are when asked) or one sensor by its address.
public enum HistorySubject: Sendable, Hashable {
    case plant(String)
    case sensor(String)
}

/// How long the history keeps what, as the settings `history.raw_days`, `history.hourly_days`
/// and `history.max_rows_per_sensor` say.
public struct HistoryRetention: Sendable, Hashable {
    /// Days each reading is kept as it came; older ones are folded into their hour.
    public var rawDays: Int
    /// Days the hourly minimum / mean / maximum / count are kept; older hours are deleted.
    public var hourlyDays: Int
    /// Most raw rows, and most hourly rows, one sensor keeps; beyond, its oldest are dropped.
    public var maxRowsPerSensor: Int

    public static let standard = HistoryRetention(rawDays: 14, hourlyDays: 730, maxRowsPerSensor: 100_000)

    public init(rawDays: Int, hourlyDays: Int, maxRowsPerSensor: Int) {
        (self.rawDays, self.hourlyDays, self.maxRowsPerSensor) = (rawDays, hourlyDays, maxRowsPerSensor)
    }

    /// Raw readings older than this are folded, in milliseconds since 1970: whole hours only, so
    /// an hour is folded at once and a reading arriving late for it is added to its hourly row.
    public func rawCutoff(now: Date) -> Int64 {
        HistoryPlan.hourStart(ISO8601Time.milliseconds(now) - Int64(rawDays) * HistoryPlan.dayMilliseconds)
    }

    /// Hourly rows older than this are deleted, in milliseconds since 1970.
    public func hourlyCutoff(now: Date) -> Int64 {
        HistoryPlan.hourStart(ISO8601Time.milliseconds(now) - Int64(hourlyDays) * HistoryPlan.dayMilliseconds)
    }
}

/// What one compaction of the history did (``HistoryRetention``), for the log and the metrics.
public struct HistoryCompaction: Sendable, Equatable {
    /// Raw readings folded into their hours.
    public var folded: Int
    /// Hourly rows deleted for their age.
    public var expired: Int
    /// Rows dropped because their sensor had more than `max_rows_per_sensor`, oldest first.
    public var dropped: Int

    public init(folded: Int = 0, expired: Int = 0, dropped: Int = 0) {
        (self.folded, self.expired, self.dropped) = (folded, expired, dropped)
    }
}

/// One point of a history: the readings of one bucket (`at` to `at` + the step), as their count
/// and the minimum, mean and maximum of each value.
public struct HistoryPoint: Sendable, Equatable, Encodable {
    public var at: Date
    public var count: Int
    public var moistureMin: Int
    public var moistureMean: Double
    public var moistureMax: Int
    public var temperatureMin: Double
    public var temperatureMean: Double
    public var temperatureMax: Double

    public init(
        at: Date, count: Int, moistureMin: Int, moistureMean: Double, moistureMax: Int, temperatureMin: Double,
        temperatureMean: Double, temperatureMax: Double
    ) {
        (self.at, self.count, self.moistureMin, self.moistureMean) = (at, count, moistureMin, moistureMean)
        (self.moistureMax, self.temperatureMin) = (moistureMax, temperatureMin)
        (self.temperatureMean, self.temperatureMax) = (temperatureMean, temperatureMax)
    }

    enum CodingKeys: String, CodingKey {
        case at, count
        case moistureMin = "moisture_min", moistureMean = "moisture_mean", moistureMax = "moisture_max"
        case temperatureMin = "temperature_min", temperatureMean = "temperature_mean"
        case temperatureMax = "temperature_max"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(ISO8601Time.format(at), forKey: .at)
        try container.encode(count, forKey: .count)
        try container.encode(moistureMin, forKey: .moistureMin)
        try container.encode(moistureMean, forKey: .moistureMean)
        try container.encode(moistureMax, forKey: .moistureMax)
        try container.encode(temperatureMin, forKey: .temperatureMin)
        try container.encode(temperatureMean, forKey: .temperatureMean)
        try container.encode(temperatureMax, forKey: .temperatureMax)
    }
}
