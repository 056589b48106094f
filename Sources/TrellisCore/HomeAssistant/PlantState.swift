#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The retained `trellis/plants/<id>/state` of one plant: what its sensors read, summed up for
/// dashboards (Home Assistant reads it), keyed by the plant's store id so a rename never makes a
/// second plant.
///
/// Every key is always present (`null` while no sensor has reported), so templates never miss one:
/// - `moisture_percent`: the mean of the sensors' latest moisture on the 1–10 scale, times ten
///   (a 1–10 reading of 5 is 50 %), to one decimal;
/// - `temperature_f`: the mean of their latest temperatures in °F, to one decimal;
/// - `last_reading`: the newest reading's time, ISO 8601 in UTC;
/// - `sensors`: each sensor's own latest reading, in the plant's sensor order.
public struct PlantState: Sendable, Equatable {
    public var id: Int64
    public var name: String
    public var sensors: [PlantSensorRecord]

    public init(id: Int64, name: String, sensors: [PlantSensorRecord]) {
        self.id = id
        self.name = name
        self.sensors = sensors
    }

    /// The mean moisture in percent, nil while no sensor has reported one.
    public var moisturePercent: Double? {
        Self.mean(sensors.compactMap { $0.moisture.map { Double($0) * 10 } })
    }

    /// The mean temperature in °F, nil while no sensor has reported one.
    public var temperatureF: Double? {
        Self.mean(sensors.compactMap(\.temperature))
    }

    /// The newest reading's time.
    public var lastReading: Date? {
        sensors.compactMap(\.at).max()
    }

    /// The payload, compact JSON with sorted keys.
    public func payload() -> [UInt8] {
        JSONEnvelope.encode(
            Body(
                id: id, name: name, moisturePercent: moisturePercent, temperatureF: temperatureF,
                lastReading: lastReading.map(ISO8601Time.format),
                sensors: sensors.map {
                    Body.Sensor(
                        sensor: $0.sensor, moisture: $0.moisture, temperatureF: $0.temperature,
                        at: $0.at.map(ISO8601Time.format))
                }))
    }

    static func mean(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        return ((values.reduce(0, +) / Double(values.count)) * 10).rounded() / 10
    }

    private struct Body: Encodable {
        struct Sensor: Encodable {
            var sensor: String
            var moisture: Int?
            var temperatureF: Double?
            var at: String?

            enum CodingKeys: String, CodingKey {
                case sensor, moisture, at
                case temperatureF = "temperature_f"
            }

            func encode(to encoder: any Encoder) throws {
                try encoder.encodeEveryKey([
                    CodingKeys.sensor: sensor, .moisture: moisture, .temperatureF: temperatureF, .at: at
                ])
            }
        }

        var id: Int64
        var name: String
        var moisturePercent: Double?
        var temperatureF: Double?
        var lastReading: String?
        var sensors: [Sensor]

        enum CodingKeys: String, CodingKey {
            case id, name, sensors
            case moisturePercent = "moisture_percent"
            case temperatureF = "temperature_f"
            case lastReading = "last_reading"
        }

        /// Every key, `null` for what is unknown.
        func encode(to encoder: any Encoder) throws {
            try encoder.encodeEveryKey([
                CodingKeys.id: id, .name: name, .moisturePercent: moisturePercent, .temperatureF: temperatureF,
                .lastReading: lastReading, .sensors: sensors
            ])
        }
    }
}
