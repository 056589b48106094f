/// Care in plain words, from a species' USDA characteristics.
///
/// As JSON: `{"watering","light","cold"}`, three sentences.
public struct CareAdvice: Sendable, Hashable, Codable {
    /// How often to water, from Moisture Use: Low every 2–3 weeks, Medium every 1–2 weeks, High every 3–4 days.
    public var watering: String
    /// Where to put it, from Shade Tolerance: Tolerant shade, Intermediate part sun, Intolerant full sun.
    public var light: String
    /// How cold it may get, from the minimum temperature.
    public var cold: String

    public init(watering: String, light: String, cold: String) {
        self.watering = watering
        self.light = light
        self.cold = cold
    }

    /// The advice for `species`.
    public init(for species: Species) {
        self.init(
            watering: Self.watering(species.moistureUse), light: Self.light(species.shadeTolerance),
            cold: Self.cold(minTempF: species.minTempF))
    }

    /// The watering sentence for a Moisture Use.
    public static func watering(_ use: MoistureUse) -> String {
        switch use {
        case .low: "Water every 2–3 weeks; let the soil dry out between waterings."
        case .medium: "Water every 1–2 weeks; keep the soil lightly moist."
        case .high: "Water every 3–4 days; never let the soil dry out."
        }
    }

    /// The light sentence for a Shade Tolerance.
    public static func light(_ tolerance: ShadeTolerance) -> String {
        switch tolerance {
        case .tolerant: "Grows in shade; bright indirect light or a shady bed suits it."
        case .intermediate: "Likes part sun: a few hours of direct sun, shade for the rest of the day."
        case .intolerant: "Needs full sun: at least six hours of direct sun a day."
        }
    }

    /// The cold sentence for a minimum temperature in °F.
    public static func cold(minTempF: Double) -> String {
        let degrees = format(minTempF)
        if minTempF < -17 {
            return "Very hardy: survives winters down to \(degrees) °F outdoors."
        } else if minTempF < 23 {
            return "Hardy to \(degrees) °F: survives a moderate winter outdoors, but not a severe one."
        } else if minTempF < 40 {
            return "Frost-tender: bring it indoors before the temperature drops to \(degrees) °F."
        } else {
            return "Keep it above \(degrees) °F: a house plant in most climates."
        }
    }

    /// A temperature without a needless `.0`.
    static func format(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
