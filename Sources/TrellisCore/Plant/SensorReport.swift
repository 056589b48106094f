#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One reading published by a sensor on `rpi/sensors/<sensor>`.
///
/// The MQTT payload is a JSON object `{"moisture": 1-10, "temperature": <°F>, "at": "<ISO 8601>"}`
/// where `at` is optional (the relay uses the receive time when it is absent or `null`).
/// Unknown members are ignored so sensors can send extra diagnostics.
public struct SensorReport: Sendable, Equatable {
    /// Soil moisture on the sensor's 1–10 scale.
    public var moisture: Int
    /// Temperature in degrees Fahrenheit, within -100...200.
    public var temperature: Double
    /// When the reading was taken, if the sensor said so.
    public var at: Date?

    /// Creates a report from already validated values.
    public init(moisture: Int, temperature: Double, at: Date? = nil) {
        self.moisture = moisture
        self.temperature = temperature
        self.at = at
    }

    /// The accepted moisture range.
    public static let moistureRange = 1...10
    /// The accepted temperature range, in °F; anything outside is a broken sensor.
    public static let temperatureRange = -100.0...200.0

    /// Decodes and validates a raw MQTT payload.
    public static func decode(_ payload: [UInt8]) -> Result<SensorReport, SensorReportRejection> {
        guard String(validating: payload, as: UTF8.self) != nil else { return .failure(.invalidUTF8) }
        let value: SensorJSONValue
        do {
            value = try JSONDecoder().decode(SensorJSONValue.self, from: Data(payload))
        } catch {
            return .failure(.invalidJSON)
        }
        guard case .object(let members) = value else { return .failure(.notAnObject) }

        guard let rawMoisture = members["moisture"] else { return .failure(.missingMoisture) }
        guard case .number(let moistureNumber) = rawMoisture else { return .failure(.invalidMoisture) }
        guard moistureNumber.isFinite, moistureNumber.rounded() == moistureNumber else {
            return .failure(.moistureNotInteger)
        }
        guard moistureNumber >= Double(moistureRange.lowerBound), moistureNumber <= Double(moistureRange.upperBound)
        else {
            return .failure(.moistureOutOfRange)
        }

        guard let rawTemperature = members["temperature"] else { return .failure(.missingTemperature) }
        guard case .number(let temperature) = rawTemperature else { return .failure(.invalidTemperature) }
        guard temperature.isFinite, temperatureRange.contains(temperature) else {
            return .failure(.temperatureOutOfRange)
        }

        var at: Date?
        switch members["at"] {
        case nil, .null?:
            at = nil
        case .string(let text)?:
            guard let date = PlantTimestamp.parse(text) else { return .failure(.invalidAt) }
            at = date
        default:
            return .failure(.invalidAt)
        }
        return .success(SensorReport(moisture: Int(moistureNumber), temperature: temperature, at: at))
    }
}

/// Why a sensor payload was rejected; ``reason`` is the short name used in logs and dead letters.
public enum SensorReportRejection: String, Error, Sendable, CaseIterable {
    /// The payload is not valid UTF-8.
    case invalidUTF8 = "invalid_utf8"
    /// The payload is not valid JSON.
    case invalidJSON = "invalid_json"
    /// The JSON is valid but not an object.
    case notAnObject = "not_an_object"
    /// There is no `moisture` member.
    case missingMoisture = "missing_moisture"
    /// `moisture` is not a number.
    case invalidMoisture = "invalid_moisture"
    /// `moisture` is a number with a fractional part.
    case moistureNotInteger = "moisture_not_integer"
    /// `moisture` is outside 1...10.
    case moistureOutOfRange = "moisture_out_of_range"
    /// There is no `temperature` member.
    case missingTemperature = "missing_temperature"
    /// `temperature` is not a number.
    case invalidTemperature = "invalid_temperature"
    /// `temperature` is not finite or outside -100...200 °F.
    case temperatureOutOfRange = "temperature_out_of_range"
    /// `at` is present but not an ISO 8601 date-time string.
    case invalidAt = "invalid_at"

    /// The short, stable reason string.
    public var reason: String { rawValue }
}

/// A JSON value as seen by the sensor decoder: objects keep their members one level deep and
/// nested containers are not inspected, so hostile, deeply nested payloads cost no recursion here.
enum SensorJSONValue: Decodable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case object([String: SensorJSONMember])
    case other

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let member = SensorJSONMember(container) {
            switch member {
            case .null: self = .null
            case .bool(let value): self = .bool(value)
            case .number(let value): self = .number(value)
            case .string(let value): self = .string(value)
            case .container: self = .other
            }
        } else if let members = try? container.decode([String: SensorJSONMember].self) {
            self = .object(members)
        } else {
            self = .other
        }
    }
}

/// One member of a sensor payload object: a scalar, or an uninspected nested container.
enum SensorJSONMember: Decodable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case container

    init(from decoder: any Decoder) throws {
        self = Self(try decoder.singleValueContainer()) ?? .container
    }

    init?(_ container: any SingleValueDecodingContainer) {
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else {
            return nil
        }
    }
}
