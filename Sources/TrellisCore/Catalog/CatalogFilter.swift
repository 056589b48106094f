/// A range of minimum temperatures, in °F, that a search accepts.
///
/// The three buckets of the original app are half-open, `from ≤ t < to`, except the warmest,
/// which includes 100 °F: `-75..-17`, `-17..23`, `23..100`. A range given as `{"from":…,"to":…}`
/// includes both ends.
public struct TemperatureRange: Sendable, Hashable {
    /// The lowest temperature accepted.
    public var lower: Double
    /// The upper end.
    public var upper: Double
    /// Whether ``upper`` itself is accepted.
    public var includesUpper: Bool

    public init(lower: Double, upper: Double, includesUpper: Bool = true) {
        self.lower = lower
        self.upper = upper
        self.includesUpper = includesUpper
    }

    /// The buckets of the original app, by their names.
    public static let buckets: [(name: String, range: TemperatureRange)] = [
        ("-75..-17", TemperatureRange(lower: -75, upper: -17, includesUpper: false)),
        ("-17..23", TemperatureRange(lower: -17, upper: 23, includesUpper: false)),
        ("23..100", TemperatureRange(lower: 23, upper: 100, includesUpper: true))
    ]

    /// The bucket named `name`, or nil.
    public static func bucket(named name: String) -> TemperatureRange? {
        buckets.first { $0.name == name.trimmingWhitespace() }?.range
    }

    /// Whether `temperature` is in the range.
    public func contains(_ temperature: Double) -> Bool {
        temperature >= lower && (includesUpper ? temperature <= upper : temperature < upper)
    }
}

/// What a catalog search looks for; `nil` members (the value `any`) match everything.
public struct CatalogFilter: Sendable, Hashable {
    public var moisture: MoistureUse?
    public var shade: ShadeTolerance?
    public var minTemp: TemperatureRange?
    /// Lower-case text that the common or scientific name must contain; nil or empty matches all.
    public var name: String?

    /// The longest name text accepted, in characters.
    public static let maximumNameLength = 100

    public init(
        moisture: MoistureUse? = nil, shade: ShadeTolerance? = nil, minTemp: TemperatureRange? = nil,
        name: String? = nil
    ) {
        self.moisture = moisture
        self.shade = shade
        self.minTemp = minTemp
        let trimmed = name?.trimmingWhitespace().lowercased()
        self.name = trimmed?.isEmpty == true ? nil : trimmed
    }

    /// Reads a `moisture` filter: `Low`, `Medium`, `High` (any case) or `any`.
    /// - Returns: `.success(nil)` for `any`.
    public static func moisture(_ text: String) -> Result<MoistureUse?, FilterError> {
        if text.trimmingWhitespace().lowercased() == "any" { return .success(nil) }
        guard let value = MoistureUse(text: text) else {
            return .failure(FilterError(member: "moisture", message: "moisture must be Low, Medium, High or any"))
        }
        return .success(value)
    }

    /// Reads a `shade` filter: `Tolerant`, `Intermediate`, `Intolerant` (any case) or `any`.
    public static func shade(_ text: String) -> Result<ShadeTolerance?, FilterError> {
        if text.trimmingWhitespace().lowercased() == "any" { return .success(nil) }
        guard let value = ShadeTolerance(text: text) else {
            return .failure(
                FilterError(member: "shade", message: "shade must be Tolerant, Intermediate, Intolerant or any"))
        }
        return .success(value)
    }

    /// Reads a `min_temp` bucket name or `any`.
    public static func minTemp(bucket text: String) -> Result<TemperatureRange?, FilterError> {
        if text.trimmingWhitespace().lowercased() == "any" { return .success(nil) }
        guard let range = TemperatureRange.bucket(named: text) else {
            return .failure(
                FilterError(
                    member: "min_temp",
                    message: "min_temp must be -75..-17, -17..23, 23..100, any or {\"from\":…,\"to\":…}"))
        }
        return .success(range)
    }

    /// Reads a `min_temp` given as `{"from":…,"to":…}`; either end may be missing (open).
    public static func minTemp(from: Double?, to: Double?) -> Result<TemperatureRange?, FilterError> {
        let lower = from ?? -Double.greatestFiniteMagnitude
        let upper = to ?? Double.greatestFiniteMagnitude
        guard lower.isFinite, upper.isFinite else {
            return .failure(
                FilterError(member: "min_temp", message: "min_temp.from and min_temp.to must be finite numbers"))
        }
        guard lower <= upper else {
            return .failure(FilterError(member: "min_temp", message: "min_temp.from must not be above min_temp.to"))
        }
        return .success(TemperatureRange(lower: lower, upper: upper, includesUpper: true))
    }

    /// Reads a `name` filter.
    public static func name(_ text: String) -> Result<String?, FilterError> {
        guard text.count <= maximumNameLength else {
            return .failure(
                FilterError(
                    member: "name",
                    message: "name has \(text.count) characters; at most \(maximumNameLength) are allowed"))
        }
        let trimmed = text.trimmingWhitespace().lowercased()
        return .success(trimmed.isEmpty ? nil : trimmed)
    }

    /// Whether `species` matches every filter; the store's SQL does the same.
    public func matches(_ species: Species) -> Bool {
        if let moisture, species.moistureUse != moisture { return false }
        if let shade, species.shadeTolerance != shade { return false }
        if let minTemp, !minTemp.contains(species.minTempF) { return false }
        if let name, !species.searchName.contains(name) { return false }
        return true
    }
}

/// A filter value that is not acceptable: the request member and a sentence.
public struct FilterError: Error, Sendable, Equatable {
    public var member: String
    public var message: String
}
