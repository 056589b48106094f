/// What Trellis publishes for the fleet: retained device and model records, commands and log
/// entries, as compact JSON with sorted keys.
public enum DevicePayloads {
    /// The retained `devices/<id>/info`.
    public static func info(_ device: DeviceRecord) -> [UInt8] { JSONEnvelope.encode(device) }

    /// The retained `trellis/models/<id>/info`.
    public static func modelInfo(_ model: ModelRecord) -> [UInt8] { JSONEnvelope.encode(model) }

    /// One entry on `trellis/logs/<id>`.
    ///
    /// Every stored log line is streamed in this form, so it is written by hand, byte for byte what `JSONEncoder` with
    /// sorted keys writes (strings needing an escape go through it).
    public static func logEntry(_ entry: DeviceLogEntry) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(entry.message.utf8.count + entry.type.utf8.count + 64)
        out.append(contentsOf: #"{"message":"#.utf8)
        PlantPayloads.appendString(entry.message, to: &out)
        out.append(contentsOf: #","timestamp":"#.utf8)
        PlantPayloads.appendString(ISO8601Time.format(entry.timestamp), to: &out)
        out.append(contentsOf: #","type":"#.utf8)
        PlantPayloads.appendString(entry.type, to: &out)
        out.append(0x7D)
        return out
    }

    /// `{"op":"restart"}` on `devices/<id>/command`.
    public static func restartCommand() -> [UInt8] { Array(#"{"op":"restart"}"#.utf8) }

    /// `{"build":N,"model":…,"op":"code"}` on `devices/<id>/command`.
    public static func codeCommand(model: String, build: Int) -> [UInt8] {
        JSONEnvelope.encode(CodeCommand(build: build, model: model, op: "code"))
    }

    private struct CodeCommand: Encodable {
        var build: Int
        var model: String
        var op: String
    }
}
