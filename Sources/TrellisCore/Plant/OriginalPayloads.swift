/// The answer payloads of the original host (`host.py` of Plant-Tracker 1.0.0), written so that
/// the released app reads every one: it replaces `--` with `:` and `'` with `"`, then parses JSON.
///
/// - A plant: `json.dumps({"Name": …, "Sensors": "<JSON array text>"})` with `:` written as `--`,
///   `{"Name"-- "Fern", "Sensors"-- "[\"0x36\", \"0x37\"]"}`.
/// - A sensor: Python's dict text with `:` written as `--`,
///   `{'moisture'-- 5, 'temperature'-- 70, 'plant'-- 'Fern', 'sensor'-- '0x36'}`.
///
/// Strings are written ASCII-only, as `json.dumps` does: `'`, `:`, `;`, a `-` followed by another
/// `-`, control characters and everything outside ASCII become JSON `\uXXXX` escapes, which the
/// app's two replacements leave alone and its JSON parser turns back into the character. So every
/// name arrives as it is stored, including `Bob's`, `a--b`, `a:b` or `Café`.
public enum OriginalPayloads {
    /// One `RES_plantInfoOnStartup` payload.
    public static func plantInfo(_ plant: PlantSummary) -> String {
        let sensors = "[" + plant.sensors.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
        return "{\"Name\"-- \(quoted(plant.name, "\"")), \"Sensors\"-- \(quoted(sensors, "\""))}"
    }

    /// One `RES_plantSensorData` payload, or `nil` for a sensor that has not reported: the app
    /// force-casts `moisture` to `Int`. The temperature is rounded to a whole °F (the host sent
    /// `int(°F)`; the app shows the value as given).
    public static func sensorRecord(_ record: PlantSensorRecord) -> String? {
        guard let moisture = record.moisture, let temperature = record.temperature else { return nil }
        let whole = temperature.isFinite && abs(temperature) < 1e15 ? Int64(temperature.rounded()) : 0
        return
            "{'moisture'-- \(moisture), 'temperature'-- \(whole), 'plant'-- \(quoted(record.plant, "'")), 'sensor'-- \(quoted(record.sensor, "'"))}"
    }

    /// `text` between `quote`s, escaped as described above.
    static func quoted(_ text: String, _ quote: Character) -> String {
        var out = String(quote)
        let scalars = Array(text.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "'", ":", ";": out += escape(scalar.value)
            case "-" where index + 1 < scalars.count && scalars[index + 1] == "-": out += escape(scalar.value)
            case " "..."~": out.unicodeScalars.append(scalar)
            default:
                for unit in String(scalar).utf16 { out += escape(UInt32(unit)) }
            }
        }
        out.append(quote)
        return out
    }

    private static func escape(_ unit: UInt32) -> String {
        let hex = String(unit, radix: 16)
        return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
