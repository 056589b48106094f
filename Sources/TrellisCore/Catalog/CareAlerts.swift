/// What can be wrong with a tracked plant's care.
public enum CareAlertKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// The soil is drier than the species' lowest comfortable moisture.
    case dry
    /// The soil is wetter than the species' highest comfortable moisture.
    case wet
    /// The temperature is below the species' minimum plus the margin.
    case cold
}

/// One condition found in a reading, before the store knows since when it holds.
public struct CareCondition: Sendable, Hashable {
    public var kind: CareAlertKind
    /// The sensor whose reading shows it.
    public var sensor: String
    /// The reading: moisture on the 1–10 scale, or temperature in °F.
    public var value: Double
    /// The limit crossed: the lowest or highest comfortable moisture, or the minimum temperature plus margin.
    public var limit: Double

    public init(kind: CareAlertKind, sensor: String, value: Double, limit: Double) {
        (self.kind, self.sensor, self.value, self.limit) = (kind, sensor, value, limit)
    }
}

/// One sensor's latest reading, as care evaluation sees it.
public struct CareReading: Sendable, Hashable {
    public var sensor: String
    public var moisture: Int
    public var temperature: Double

    public init(sensor: String, moisture: Int, temperature: Double) {
        (self.sensor, self.moisture, self.temperature) = (sensor, moisture, temperature)
    }
}

/// Compares readings with a species' needs.
///
/// Comfortable soil moisture on the sensors' 1–10 scale, by Moisture Use:
///
/// | Moisture Use | `dry` below | `wet` above |
/// |---|---|---|
/// | Low    | 2 | 6 |
/// | Medium | 3 | 8 |
/// | High   | 5 | 10 (never) |
///
/// `cold` when the temperature is below the species' minimum temperature plus a margin
/// (``defaultColdMargin``, 5 °F, unless configured).
public enum CareAlerts {
    /// The default margin above the species' minimum temperature, in °F.
    public static let defaultColdMargin = 5.0

    /// The comfortable moisture range of a Moisture Use.
    public static func comfortableMoisture(_ use: MoistureUse) -> ClosedRange<Int> {
        switch use {
        case .low: 2...6
        case .medium: 3...8
        case .high: 5...10
        }
    }

    /// Every condition the readings show, sorted by sensor then kind (dry, wet, cold).
    public static func evaluate(_ readings: [CareReading], species: Species, coldMargin: Double = defaultColdMargin)
        -> [CareCondition]
    {
        let comfortable = comfortableMoisture(species.moistureUse)
        let coldLimit = species.minTempF + coldMargin
        var conditions: [CareCondition] = []
        for reading in readings.sorted(by: { $0.sensor < $1.sensor }) {
            if reading.moisture < comfortable.lowerBound {
                conditions.append(
                    CareCondition(
                        kind: .dry, sensor: reading.sensor, value: Double(reading.moisture),
                        limit: Double(comfortable.lowerBound)))
            } else if reading.moisture > comfortable.upperBound {
                conditions.append(
                    CareCondition(
                        kind: .wet, sensor: reading.sensor, value: Double(reading.moisture),
                        limit: Double(comfortable.upperBound)))
            }
            if reading.temperature < coldLimit {
                conditions.append(
                    CareCondition(kind: .cold, sensor: reading.sensor, value: reading.temperature, limit: coldLimit))
            }
        }
        return conditions
    }
}

/// A topic level that names a plant: in a name that could not be one level as it is, the
/// characters `/`, `+`, `#`, `%` and control characters are written as `%XX` (UTF-8, upper-case hex).
public enum TopicLevelEncoding {
    public static func encode(_ name: String) -> String {
        var out = ""
        for scalar in name.unicodeScalars {
            if scalar == "/" || scalar == "+" || scalar == "#" || scalar == "%" || scalar.value < 0x20
                || scalar.value == 0x7F
            {
                for byte in String(scalar).utf8 {
                    out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
                }
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
