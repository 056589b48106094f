#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A plant as listed in `RES_plantInfoOnStartup`: its name and sensor addresses.
public struct PlantSummary: Sendable, Equatable, Codable {
    /// The plant's name.
    public var name: String
    /// The plant's sensor addresses, normalized (`0x36`).
    public var sensors: [String]

    /// Creates a summary.
    public init(name: String, sensors: [String]) {
        self.name = name
        self.sensors = sensors
    }
}

/// One row of `RES_plantSensorData`: the latest reading of one sensor of one plant.
///
/// The reading fields are `nil` while the sensor has not reported; they render as JSON `null`
/// so that clients always see every sensor of every requested plant.
public struct PlantSensorRecord: Sendable, Equatable, Encodable {
    /// The plant's name.
    public var plant: String
    /// The sensor's address.
    public var sensor: String
    /// The latest moisture (1–10), or `nil`.
    public var moisture: Int?
    /// The latest temperature in °F, or `nil`.
    public var temperature: Double?
    /// When the latest reading was taken, or `nil`.
    public var at: Date?

    /// Creates a record; pass `nil` readings for a sensor that has not reported yet.
    public init(plant: String, sensor: String, moisture: Int? = nil, temperature: Double? = nil, at: Date? = nil) {
        self.plant = plant
        self.sensor = sensor
        self.moisture = moisture
        self.temperature = temperature
        self.at = at
    }

    /// Creates a record from a decoded report, using `receivedAt` when the report has no `at`.
    public init(plant: String, sensor: String, report: SensorReport?, receivedAt: Date? = nil) {
        self.init(
            plant: plant, sensor: sensor, moisture: report?.moisture,
            temperature: report?.temperature, at: report.flatMap { $0.at ?? receivedAt }
        )
    }

    private enum CodingKeys: String, CodingKey {
        case plant, sensor, moisture, temperature, at
    }

    /// Encodes every key, writing `null` for missing readings and `at` as ISO 8601 UTC with milliseconds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(plant, forKey: .plant)
        try container.encode(sensor, forKey: .sensor)
        try container.encode(moisture, forKey: .moisture)
        try container.encode(temperature, forKey: .temperature)
        try container.encode(at.map(PlantTimestamp.format), forKey: .at)
    }
}

/// Renderers for reply payloads: deterministic, compact JSON (sorted keys, unescaped slashes)
/// so replies are byte-for-byte reproducible and easy to assert on.
public enum PlantPayloads {
    /// `RES_plantInfoOnStartup`: `{"count":N,"plants":[{"name":…,"sensors":[…]},…]}`.
    public static func plantInfo(_ plants: [PlantSummary]) -> String {
        render(PlantInfoBody(count: plants.count, plants: plants))
    }

    /// `RES_plantSensorData`: a JSON array of ``PlantSensorRecord`` objects, in the given order.
    ///
    /// The hottest reply of the relay, so it is written by hand, byte for byte what `JSONEncoder`
    /// with sorted keys writes; a string or number outside the plain forms goes through `render`.
    public static func sensorData(_ records: [PlantSensorRecord]) -> String {
        var out: [UInt8] = [0x5B]
        out.reserveCapacity(records.count * 96 + 2)
        for (index, record) in records.enumerated() {
            if index > 0 { out.append(0x2C) }
            out.append(contentsOf: #"{"at":"#.utf8)
            if let at = record.at {
                appendString(PlantTimestamp.format(at), to: &out)
            } else {
                out.append(contentsOf: "null".utf8)
            }
            out.append(contentsOf: #","moisture":"#.utf8)
            out.append(contentsOf: (record.moisture.map(String.init) ?? "null").utf8)
            out.append(contentsOf: #","plant":"#.utf8)
            appendString(record.plant, to: &out)
            out.append(contentsOf: #","sensor":"#.utf8)
            appendString(record.sensor, to: &out)
            out.append(contentsOf: #","temperature":"#.utf8)
            if let temperature = record.temperature {
                if temperature == temperature.rounded(), abs(temperature) < 1e15 {
                    out.append(contentsOf: String(Int64(temperature)).utf8)
                } else {
                    out.append(contentsOf: render(temperature).utf8)
                }
            } else {
                out.append(contentsOf: "null".utf8)
            }
            out.append(0x7D)
        }
        out.append(0x5D)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `text` as a JSON string: plain text directly, anything needing an escape through `render`.
    static func appendString(_ text: String, to out: inout [UInt8]) {
        if text.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
            out.append(contentsOf: render(text).utf8)
        } else {
            out.append(0x22)
            out.append(contentsOf: text.utf8)
            out.append(0x22)
        }
    }

    /// `RES_numPlants`: the count as decimal text.
    public static func numPlants(_ count: Int) -> String {
        String(count)
    }

    /// Formats a date as ISO 8601 UTC with milliseconds, e.g. `2026-11-22T10:41:05.123Z`.
    public static func timestamp(_ date: Date) -> String {
        PlantTimestamp.format(date)
    }

    private struct PlantInfoBody: Encodable {
        var count: Int
        var plants: [PlantSummary]
    }

    static func render(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            preconditionFailure("encoding plain value types to JSON cannot fail: \(error)")
        }
    }
}
