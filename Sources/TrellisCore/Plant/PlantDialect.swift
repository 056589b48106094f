/// The two ways the plant tracker's payloads are written. Parsing, validation and the order of
/// errors are one implementation (``PlantProtocol``, ``PlantName``, ``NewPlantRequest``); a dialect
/// only reads a request's payload (``read(_:payload:)``) and writes answers (``render(_:)``,
/// ``wire(_:)``).
///
/// - ``original``: what the released Plant-Tracker iPhone app (1.0.0) and the host it shipped with
///   speak. `REQ_plantInfoOnStartup` asks for one plant by index, adds are `<name>--["0x36"]`,
///   answers are the host's texts with `:` written as `--` (one message per plant or per sensor),
///   IDs are `0`, and add, rename and delete are not answered on success. Every message is five
///   non-empty fields without `;` or `:` in a value, because the app splits with Swift's
///   `split(separator:)`, which drops empty pieces. The default on the shared topics.
/// - ``lossless``: Trellis's own form. Payloads are percent-encoded (`%25`, `%3B`, `%3A`), answers
///   are JSON, IDs are echoed and every request is answered. Always used on the per-client topics
///   and for v5 Response Topics.
public enum PlantDialect: String, Sendable, CaseIterable, Hashable {
    case original
    case lossless
}

/// What a request produced, before a dialect writes it.
public enum PlantResult: Sendable, Equatable {
    /// `REQ_plantInfoOnStartup`: the plants asked for, in creation order.
    case plants([PlantSummary])
    /// `REQ_plantSensorData`: one record per sensor of each plant asked for.
    case sensorRecords([PlantSensorRecord])
    /// `REQ_numPlants`.
    case count(Int)
    /// `REQ_addNewPlant` stored the plant with this name.
    case added(String)
    /// `REQ_deletePlant` deleted the plant with this name.
    case deleted(String)
    /// `REQ_editPlant` left the plant with this (new) name; also when both names were equal.
    case renamed(String)
}

/// How a dialect writes a ``PlantResult``.
public enum PlantRendering: Sendable, Equatable {
    /// One answer message per payload, in order; none at all is a silent success.
    case payloads([String])
    /// The result cannot be shown in this dialect: answer with this error instead.
    case error(PlantErrorTag)
}
