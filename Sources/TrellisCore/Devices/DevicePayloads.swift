/// What Trellis publishes for the fleet: retained device and model records, commands and log
/// entries, as compact JSON with sorted keys.
public enum DevicePayloads {
    /// The retained `devices/<id>/info`.
    public static func info(_ device: DeviceRecord) -> [UInt8] { JSONEnvelope.encode(device) }

    /// The retained `trellis/models/<id>/info`.
    public static func modelInfo(_ model: ModelRecord) -> [UInt8] { JSONEnvelope.encode(model) }

    /// One entry on `trellis/logs/<id>`.
    public static func logEntry(_ entry: DeviceLogEntry) -> [UInt8] { JSONEnvelope.encode(entry) }

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
